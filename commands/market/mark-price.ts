// The venue's mark price of a token, for a step that trades at it: the market stream's state as
// this process verified it within the last second (a price set by hand moves rarely; a fan-out to
// a thousand pools reads it once).
import { MARKET_PRICES, marketDecider } from '../../domain/market/decide.ts';
import type { MicroUsd } from '../../domain/shared/money.ts';
import type { Tools } from '../dispatch.ts';

const PRICE_STALE_MS = 1_000;

/** micro-USD per whole token, by the symbol or mint as the market holds it (symbols also in upper case); null when it has none. */
export async function markPriceOf(tools: Tools, token: string): Promise<MicroUsd | null> {
  const { state } = await tools.load(marketDecider, MARKET_PRICES, { maxStaleMs: PRICE_STALE_MS });
  return state.prices.get(token) ?? state.prices.get(token.toUpperCase()) ?? null;
}

/**
 * The price a manual swap of `mint` executes at: the market's under exactly that key, as the
 * simulated venue matches it; null when it has none. A price set within the last second may not be
 * in this process's copy yet: a miss reads the market stream again.
 */
export async function swapPriceOf(tools: Tools, mint: string): Promise<MicroUsd | null> {
  const cached = await tools.load(marketDecider, MARKET_PRICES, { maxStaleMs: PRICE_STALE_MS });
  const price = cached.state.prices.get(mint);
  if (price !== undefined) return price;
  return (await tools.load(marketDecider, MARKET_PRICES, { maxStaleMs: 0 })).state.prices.get(mint) ?? null;
}
