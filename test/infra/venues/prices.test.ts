// Mark prices: the in-memory source tests use, and the bundle handing the given source through.
import t from 'tap';
import { createInMemoryPrices } from '../../../infra/venues/prices.ts';
import { simulated } from './fixtures.ts';

/** USD × 10^18: a price in attodollars. */
const usd = (n: number) => BigInt(Math.round(n * 1_000_000)) * 10n ** 12n;

t.test('a price set is read back in attodollars per whole token; an unknown token has none', async (t) => {
  const prices = createInMemoryPrices({ SOL: usd(150.25) });
  prices.set('So11111111111111111111111111111111111111112', usd(150.3));
  t.equal(await prices.priceOf('SOL'), usd(150.25));
  t.equal(await prices.priceOf('So11111111111111111111111111111111111111112'), usd(150.3));
  t.equal(await prices.priceOf('BONK'), null);
  t.equal(await prices.priceOf('sol'), null, 'keys are matched as given');
  prices.set('SOL', usd(151));
  t.equal(await prices.priceOf('SOL'), usd(151), 'a later price replaces the earlier one');
  prices.set('PEPE', 11_500_000_000_000n);
  t.equal(await prices.priceOf('PEPE'), 11_500_000_000_000n, 'a price finer than a micro-USD (0.0000115)');
});

t.test('a price that is not positive is refused', async (t) => {
  const prices = createInMemoryPrices();
  for (const bad of [0n, -1n]) t.throws(() => prices.set('SOL', bad), RangeError, `price ${bad}`);
  t.equal(await prices.priceOf('SOL'), null);
});

t.test('the simulated venues read the price source they were given', async (t) => {
  const prices = createInMemoryPrices({ ETH: usd(3_000) });
  const { venues } = simulated({ prices });
  t.equal(venues.prices, prices);
  prices.set('ETH', usd(3_100));
  t.equal(await venues.prices.priceOf('ETH'), usd(3_100));
});
