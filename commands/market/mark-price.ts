// The venue's mark price of a token, for a step that trades at it: the market stream's state as
// this process verified it within the last second (a price set by hand moves rarely; a fan-out to
// a thousand pools reads it once).
import { MARKET_PRICES, marketDecider, type MarketState } from '../../domain/market/decide.ts';
import type { Price } from '../../domain/shared/price.ts';
import type { Tools } from '../tools.ts';

const PRICE_STALE_MS = 1_000;

/** How a step looks a price up; by default as a trade at the mark does. */
export interface PriceLookup {
  /** only under exactly the key given (the simulated venue matches a swap's mint so), not its upper case */
  exactKey?: boolean;
  /** a miss reads the market stream again: a price set within the last second may not be in this process's copy yet */
  rereadOnMiss?: boolean;
}

/** The price a manual swap of a mint executes at: the market's under exactly that key, as the simulated venue matches it. */
export const SWAP_PRICE: PriceLookup = { exactKey: true, rereadOnMiss: true };

/**
 * The price per whole token, by the symbol or mint as the market holds it (symbols also in upper
 * case, unless `exactKey`); null when it has none.
 */
export async function markPriceOf(tools: Tools, token: string, lookup: PriceLookup = {}): Promise<Price | null> {
  const priceIn = ({ prices }: MarketState): Price | undefined => prices.get(token) ?? (lookup.exactKey ? undefined : prices.get(token.toUpperCase()));
  const cached = priceIn((await tools.load(marketDecider, MARKET_PRICES, { maxStaleMs: PRICE_STALE_MS })).state);
  if (cached !== undefined || !lookup.rereadOnMiss) return cached ?? null;
  return priceIn((await tools.load(marketDecider, MARKET_PRICES, { maxStaleMs: 0 })).state) ?? null;
}
