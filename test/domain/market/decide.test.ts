import t from 'tap';
import { marketDecider, type MarketCommand } from '../../../domain/market/decide.ts';
import type { MarketEvent } from '../../../domain/market/events.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const now = new Date('2025-01-02T03:04:05.000Z');
const { given } = scenario(marketDecider);
const setPrices = (prices: Record<string, number>): MarketCommand => ({ type: 'SetMarketPrices', data: { prices }, metadata: at(now, 'admin-id') });
const pricesSet = (prices: Record<string, number>): MarketEvent => ({ type: 'MarketPricesSet', data: { prices, at: now.toISOString() } });

t.test('the first prices are recorded as given', async (t) => {
  const first = given([]).when(setPrices({ SOL: 150_250_000, 'So11111111111111111111111111111111111111112': 150_250_000, 'BTC/USD': 1 }));
  first.then(t, [pricesSet({ SOL: 150_250_000, 'So11111111111111111111111111111111111111112': 150_250_000, 'BTC/USD': 1 })]);
  t.equal(first.after().prices.get('SOL'), 150_250_000);
});

t.test('only prices that change are recorded; other symbols keep theirs', async (t) => {
  const history = [pricesSet({ SOL: 150_000_000, BONK: 20 })];
  const second = given(history).when(setPrices({ SOL: 150_000_000, BONK: 21, JUP: 900_000 }));
  second.then(t, [pricesSet({ BONK: 21, JUP: 900_000 })]);
  t.same([second.after().prices.get('SOL'), second.after().prices.get('BONK'), second.after().prices.size], [150_000_000, 21, 3]);
});

t.test('setting the prices the market already has records nothing', async (t) => {
  given([pricesSet({ SOL: 150_000_000 })]).when(setPrices({ SOL: 150_000_000 })).then(t, []);
});

t.test('symbols are case-sensitive (mints are)', async (t) => {
  given([pricesSet({ SOL: 150_000_000 })]).when(setPrices({ sol: 150_000_000 })).then(t, [pricesSet({ sol: 150_000_000 })]);
});

t.test('bad prices and symbols are refused, whatever the entry point', async (t) => {
  given([]).when(setPrices({})).thenRefused(t, 'VALIDATION_FAILED', /1 to 500 prices/);
  const tooMany = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`T${i}`, 1]));
  given([]).when(setPrices(tooMany)).thenRefused(t, 'VALIDATION_FAILED', /1 to 500 prices/);
  for (const symbol of ['', 'x'.repeat(65), 'SO L', 'SOL\n', 'ÅSOL']) {
    given([]).when(setPrices({ [symbol]: 1 })).thenRefused(t, 'VALIDATION_FAILED', /is not a symbol or mint/);
  }
  for (const price of [0, -1, 1.5, Number.NaN]) {
    given([]).when(setPrices({ SOL: price })).thenRefused(t, 'VALIDATION_FAILED', /prices\.SOL: a price must be positive/);
  }
});
