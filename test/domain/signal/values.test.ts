// The values inside messages: prices from decimal text exactly, tokens reduced to one symbol.
import t from 'tap';
import { normaliseToken, parseSignalText } from '../../../domain/signal/index.ts';
import { decimalToMicro, numberToMicro, priceText } from '../../../domain/signal/price.ts';

t.test('a decimal text becomes micro-USD exactly, half a micro-USD rounding up', async (t) => {
  t.equal(decimalToMicro('67', '2', 3), 67_200_000_000, '67.2k');
  t.equal(decimalToMicro('1', '2', 6), 1_200_000_000_000, '1.2m');
  t.equal(decimalToMicro('0', '00001234'), 12);
  t.equal(decimalToMicro('0', '0000125'), 13);
  t.equal(decimalToMicro('0', '0000124999'), 12);
  t.equal(decimalToMicro('0', '1'), 100_000);
  t.equal(decimalToMicro('0', '0000004'), null, 'rounds to 0');
  t.equal(decimalToMicro('1000000000', ''), 1_000_000_000_000_000);
  t.equal(decimalToMicro('1000000001', ''), null, 'above the maximum');
  t.equal(decimalToMicro('00000000000000000001', '5'), 1_500_000, 'leading zeros');
  t.equal(numberToMicro(0.1 + 0.2), 300_000, 'the shortest text of 0.30000000000000004 rounds to 0.3');
  t.equal(numberToMicro(1e-7), null);
  t.equal(priceText(67_200_000_000), '67200');
  t.equal(priceText(12), '0.000012');
});

t.test('numbers in messages: thousands separators, shorthand, decimal comma after a zero', async (t) => {
  const entryOf = (price: string) => {
    const read = parseSignalText(`LONG BTC ${price}`);
    return read.kind === 'signal' && read.intents[0]?.action === 'open' ? read.intents[0].entry : read;
  };
  const cases: Array<[string, number, number?]> = [
    ['67,200', 67_200_000_000],
    ['67 200', 67_200_000_000],
    ['150 000', 150_000_000_000],
    ['1,250,000.5', 1_250_000_500_000],
    ['67.2k', 67_200_000_000],
    ['67.2K', 67_200_000_000],
    ['1.2m', 1_200_000_000_000],
    ['0.00001234', 12],
    ['0,5', 500_000],
    ['.75', 750_000],
    ['150 155', 150_000_000, 155_000_000],
    ['105,250', 105_250_000_000],
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
