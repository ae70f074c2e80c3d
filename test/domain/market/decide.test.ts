import t from 'tap';
import { marketDecider, type MarketCommand } from '../../../domain/market/decide.ts';
import type { MarketEvent } from '../../../domain/market/events.ts';
import { priceText } from '../../../domain/shared/price.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const now = new Date('2025-01-02T03:04:05.000Z');
const { given } = scenario(marketDecider);
/** Commands carry attodollars; `micro` writes them as a count of micro-USD. */
const micro = (n: number) => BigInt(n) * 10n ** 12n;
const setPrices = (prices: Record<string, number>): MarketCommand => ({
  type: 'SetMarketPrices',
  data: { prices: Object.fromEntries(Object.entries(prices).map(([k, v]) => [k, micro(v)])) },
  metadata: at(now, 'admin-id'),
});
/** The event a decision records: prices as decimal USD text, given here as micro-USD counts. */
const pricesSet = (prices: Record<string, number>): MarketEvent => ({
  type: 'MarketPricesSet',
  data: { prices: Object.fromEntries(Object.entries(prices).map(([k, v]) => [k, priceText(micro(v))])), at: now.toISOString() },
});
/** An event stored before prices were finer: micro-USD integers. */
const legacyPricesSet = (prices: Record<string, number>): MarketEvent => ({ type: 'MarketPricesSet', data: { prices, at: now.toISOString() } });

t.test('the first prices are recorded as given', async (t) => {
  const first = given([]).when(setPrices({ SOL: 150_250_000, So11111111111111111111111111111111111111112: 150_250_000, 'BTC/USD': 1 }));
  first.then(t, [pricesSet({ SOL: 150_250_000, So11111111111111111111111111111111111111112: 150_250_000, 'BTC/USD': 1 })]);
  t.equal(first.after().prices.get('SOL'), micro(150_250_000));
});

t.test('only prices that change are recorded; other symbols keep theirs', async (t) => {
  const history = [pricesSet({ SOL: 150_000_000, BONK: 20 })];
  const second = given(history).when(setPrices({ SOL: 150_000_000, BONK: 21, JUP: 900_000 }));
  second.then(t, [pricesSet({ BONK: 21, JUP: 900_000 })]);
  t.same([second.after().prices.get('SOL'), second.after().prices.get('BONK'), second.after().prices.size], [micro(150_000_000), micro(21), 3]);
});

t.test('events stored in micro-USD keep their meaning: upcast, never rewritten', async (t) => {
  const history = [legacyPricesSet({ SOL: 150_250_000, PEPE: 12 })];
  const state = given(history).when(setPrices({ SOL: 150_250_000 }));
  state.then(t, [], 'the same price as the old event: nothing to record');
  t.equal(state.after().prices.get('PEPE'), 12_000_000_000_000n, '12 micro-USD is 0.000012 USD');
  const finer = given(history).when({ type: 'SetMarketPrices', data: { prices: { PEPE: 11_500_000_000_000n } }, metadata: at(now, 'admin-id') });
  finer.then(t, [{ type: 'MarketPricesSet', data: { prices: { PEPE: '0.0000115' }, at: now.toISOString() } }]);
});

t.test('setting the prices the market already has records nothing', async (t) => {
  given([pricesSet({ SOL: 150_000_000 })])
    .when(setPrices({ SOL: 150_000_000 }))
    .then(t, []);
});

t.test('symbols are case-sensitive (mints are)', async (t) => {
  given([pricesSet({ SOL: 150_000_000 })])
    .when(setPrices({ sol: 150_000_000 }))
    .then(t, [pricesSet({ sol: 150_000_000 })]);
});

t.test('bad prices and symbols are refused, whatever the entry point', async (t) => {
  given([])
    .when(setPrices({}))
    .thenRefused(t, 'VALIDATION_FAILED', /1 to 500 prices/);
  const tooMany = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`T${i}`, 1]));
  given([])
    .when(setPrices(tooMany))
    .thenRefused(t, 'VALIDATION_FAILED', /1 to 500 prices/);
  for (const symbol of ['', 'x'.repeat(65), 'SO L', 'SOL\n', 'ÅSOL']) {
    given([])
      .when(setPrices({ [symbol]: 1 }))
      .thenRefused(t, 'VALIDATION_FAILED', /is not a symbol or mint/);
  }
  for (const price of [0n, -1n, 10n ** 27n + 1n]) {
    given([])
      .when({ type: 'SetMarketPrices', data: { prices: { SOL: price } }, metadata: at(now, 'admin-id') })
      .thenRefused(t, 'VALIDATION_FAILED', /prices\.SOL: a price must be above 0/);
  }
});
