// Facts of the stream `market-prices`: the mark prices of the simulated venue, set by an
// administrator. A price per whole token is its decimal USD text (domain/shared/price.ts); events
// stored before prices were finer hold an integer of micro-USD, read as what it meant.
import { z } from 'zod';
import { priceFromMicro, storedPrice, type Price } from '../shared/price.ts';

/** A symbol or a mint: 1 to 64 of letters, digits and `/ _ . : -`. Case is kept (mints are case-sensitive). */
export const MARKET_SYMBOL = /^[A-Za-z0-9/_.:-]{1,64}$/;
export const marketSymbolSchema = z.string().regex(MARKET_SYMBOL, 'a symbol or mint is 1 to 64 letters, digits or / _ . : -');

/** At most this many prices in one setting. */
export const MAX_PRICES_PER_SET = 500;

/**
 * Prices that changed, by symbol or mint, and when. The schema is lenient (any key, any price), so
 * events stay readable if the symbol rule ever changes; the decider checks the rule. A number is
 * an old event's micro-USD, a string today's decimal USD text.
 */
export const marketPricesSetSchema = z.object({
  prices: z.record(z.string(), z.union([z.string(), z.number().int().positive()])),
  at: z.string(),
});
export type MarketPricesSet = z.infer<typeof marketPricesSetSchema>;

/** A stored price, old (micro-USD integer) or new (decimal text), as a price. */
export const marketPriceOf = (stored: string | number): Price => (typeof stored === 'number' ? priceFromMicro(stored) : storedPrice(stored));

export const marketEventSchema = z.discriminatedUnion('type', [z.object({ type: z.literal('MarketPricesSet'), data: marketPricesSetSchema })]);
export type MarketEvent = z.infer<typeof marketEventSchema>;
export const marketEventTypes: ReadonlySet<string> = new Set(marketEventSchema.options.map((o) => o.shape.type.value));
