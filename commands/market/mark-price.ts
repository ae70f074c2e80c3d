// The venue's mark price of a token, for a step that trades at it: the market stream's state as
// this process verified it within the last second (a price set by hand moves rarely; a fan-out to
// a thousand pools reads it once).
import { MARKET_PRICES, marketDecider } from '../../domain/market/decide.ts';
import type { MicroUsd } from '../../domain/shared/money.ts';
import type { Tools } from '../dispatch.ts';

const PRICE_STALE_MS = 1_000;

/**
 * micro-USD per whole token, by the symbol or mint as the market holds it (symbols also in upper
 * case); null when it has none. `maxStaleMs` 0 reads the market stream again.
 */
export async function markPriceOf(tools: Tools, token: string, maxStaleMs = PRICE_STALE_MS): Promise<MicroUsd | null> {
  const { state } = await tools.load(marketDecider, MARKET_PRICES, { maxStaleMs });
  return state.prices.get(token) ?? state.prices.get(token.toUpperCase()) ?? null;
}
