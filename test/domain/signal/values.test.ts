// The values inside messages: prices from decimal text exactly, tokens reduced to one symbol.
import t from 'tap';
import { normaliseToken, parseSignalText } from '../../../domain/signal/index.ts';
import { decimalToPrice, numberToPrice } from '../../../domain/signal/price.ts';
import { priceText } from '../../../domain/shared/price.ts';

const text = (price: bigint | null) => (price === null ? null : priceText(price));

t.test('a decimal text becomes a price exactly, to 10^-18 USD, half of that rounding up', async (t) => {
  t.equal(text(decimalToPrice('67', '2', 3)), '67200', '67.2k');
  t.equal(text(decimalToPrice('1', '2', 6)), '1200000', '1.2m');
  t.equal(text(decimalToPrice('1', '23456789', 3)), '1234.56789', 'k moves the point, every digit kept');
  t.equal(text(decimalToPrice('0', '00001234')), '0.00001234', 'a memecoin keeps every digit');
  t.equal(text(decimalToPrice('0', '00000001')), '0.00000001');
  t.equal(decimalToPrice('0', '000000000000000001'), 1n, '10^-18 USD, the smallest price');
  t.equal(decimalToPrice('0', '0000000000000000015'), 2n, 'half of 10^-18 rounds up');
  t.equal(decimalToPrice('0', '0000000000000000014'), 1n);
  t.equal(decimalToPrice('0', '0000000000000000004'), null, 'rounds to 0');
  t.equal(text(decimalToPrice('1000000000', '')), '1000000000');
  t.equal(decimalToPrice('1000000001', ''), null, 'above the maximum');
  t.equal(decimalToPrice('1000000', '', 6), null, '1000000m is above the maximum');
  t.equal(text(decimalToPrice('00000000000000000001', '5')), '1.5', 'leading zeros');
  t.equal(text(numberToPrice(0.1 + 0.2)), '0.30000000000000004', 'the JSON number as written, every digit kept');
  t.equal(text(numberToPrice(0.3)), '0.3', 'the shortest text of the double, never its binary expansion');
  t.equal(text(numberToPrice(1e-8)), '0.00000001', 'a JSON number in exponent form');
  t.equal(numberToPrice(1e-19), null);
});

t.test('numbers in messages: thousands separators, shorthand, decimal comma after a zero', async (t) => {
  const entryOf = (price: string) => {
    const read = parseSignalText(`LONG BTC ${price}`);
    return read.kind === 'signal' && read.intents[0]?.action === 'open' ? read.intents[0].entry : read;
  };
  const cases: Array<[string, string, string?]> = [
    ['67,200', '67200'],
    ['67 200', '67200'],
    ['150 000', '150000'],
    ['1,250,000.5', '1250000.5'],
    ['67.2k', '67200'],
    ['67.2K', '67200'],
    ['1.2m', '1200000'],
    ['0.00001234', '0.00001234'],
    ['0,5', '0.5'],
    ['.75', '0.75'],
    ['150 155', '150', '155'],
    ['105,250', '105250'],
  ];
  for (const [text, low, high = low] of cases) t.strictSame(entryOf(text), { type: 'zone', low, high }, text);
});

t.test('token styles reduce to one upper-case symbol; mints are kept as written', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    ['#BTC/USDT', 'BTC'],
    ['$sol', 'SOL'],
    ['BTCUSDT', 'BTC'],
    ['btc-perp', 'BTC'],
    ['BTCUSDT.P', 'BTC'],
    ['ETH / USDC', 'ETH'],
    ['SOL:USDT', 'SOL'],
    ['1000PEPEUSDT', '1000PEPE'],
    ['USDT', 'USDT'],
    ['So11111111111111111111111111111111111111112', 'So11111111111111111111111111111111111111112'],
    ['0x52908400098527886E0F7030069857D2E4169EE7', '0x52908400098527886E0F7030069857D2E4169EE7'],
    ['BTC/EUR', undefined],
    ['!!!', undefined],
    ['123', undefined],
  ];
  for (const [raw, symbol] of cases) t.equal(normaliseToken(raw), symbol, raw);
});
