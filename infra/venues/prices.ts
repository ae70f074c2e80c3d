// Mark prices held in memory: for tests, and for any process that has no other PriceSource. The
// service's simulated venue reads the prices the admin route stores instead.
import type { PriceSource } from './port.ts';

export interface InMemoryPrices extends PriceSource {
  /** Sets the price of one whole token in attodollars; keys are matched exactly (normalising is the caller's). */
  set(symbolOrMint: string, price: bigint): void;
}

export function createInMemoryPrices(initial: Readonly<Record<string, bigint>> = {}): InMemoryPrices {
  const prices = new Map<string, bigint>();
  const set = (symbolOrMint: string, price: bigint): void => {
    if (price <= 0n) throw new RangeError(`price of ${symbolOrMint} must be positive`);
    prices.set(symbolOrMint, price);
  };
  for (const [key, price] of Object.entries(initial)) set(key, price);
  return {
    set,
    async priceOf(symbolOrMint) {
      return prices.get(symbolOrMint) ?? null;
    },
  };
}
