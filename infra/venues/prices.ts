// Mark prices held in memory: for tests, and for any process that has no other PriceSource. The
// service's simulated venue reads the prices the admin route stores instead.
import type { MicroUsd, PriceSource } from './port.ts';

export interface InMemoryPrices extends PriceSource {
  /** Sets the price of one whole token; keys are matched exactly (normalising is the caller's). */
  set(symbolOrMint: string, priceMicro: MicroUsd): void;
}

export function createInMemoryPrices(initial: Readonly<Record<string, MicroUsd>> = {}): InMemoryPrices {
  const prices = new Map<string, MicroUsd>();
  const set = (symbolOrMint: string, priceMicro: MicroUsd): void => {
    if (!Number.isSafeInteger(priceMicro) || priceMicro <= 0) throw new RangeError(`price of ${symbolOrMint} must be a positive safe integer of micro-USD`);
    prices.set(symbolOrMint, priceMicro);
  };
  for (const [key, price] of Object.entries(initial)) set(key, price);
  return {
    set,
    async priceOf(symbolOrMint) {
      return prices.get(symbolOrMint) ?? null;
    },
  };
}
