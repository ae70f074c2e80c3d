// Mark prices: the in-memory source tests use, and the bundle handing the given source through.
import t from 'tap';
import { createInMemoryPrices } from '../../../infra/venues/prices.ts';
import { simulated } from './fixtures.ts';

t.test('a price set is read back in micro-USD per whole token; an unknown token has none', async (t) => {
  const prices = createInMemoryPrices({ SOL: 150_250_000 });
  prices.set('So11111111111111111111111111111111111111112', 150_300_000);
  t.equal(await prices.priceOf('SOL'), 150_250_000);
  t.equal(await prices.priceOf('So11111111111111111111111111111111111111112'), 150_300_000);
  t.equal(await prices.priceOf('BONK'), null);
  t.equal(await prices.priceOf('sol'), null, 'keys are matched as given');
  prices.set('SOL', 151_000_000);
  t.equal(await prices.priceOf('SOL'), 151_000_000, 'a later price replaces the earlier one');
});

t.test('a price that is not a positive safe integer of micro-USD is refused', async (t) => {
  const prices = createInMemoryPrices();
  for (const bad of [0, -1, 1.5, Number.NaN]) t.throws(() => prices.set('SOL', bad), RangeError, `price ${bad}`);
  t.equal(await prices.priceOf('SOL'), null);
});

t.test('the simulated venues read the price source they were given', async (t) => {
  const prices = createInMemoryPrices({ ETH: 3_000_000_000 });
  const { venues } = simulated({ prices });
  t.equal(venues.prices, prices);
  prices.set('ETH', 3_100_000_000);
  t.equal(await venues.prices.priceOf('ETH'), 3_100_000_000);
});
