// The market's mark prices: one stream for the whole simulated venue. Setting a price it already
// has records nothing, so a repeated request leaves the stream as it was.
import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { refuse } from '../shared/errors.ts';
import { PersistentMap } from '../shared/persistent-map.ts';
import { MAX_PRICE, MIN_PRICE, priceText, type Price } from '../shared/price.ts';
import { MARKET_SYMBOL, MAX_PRICES_PER_SET, marketPriceOf, type MarketEvent } from './events.ts';

/** The one instance: its stream is `market-prices`. */
export const MARKET_PRICES = 'prices';
export const marketStream = (id: string): string => `market-${id}`;

export interface MarketState {
  /** per symbol or mint, per whole token */
  readonly prices: PersistentMap<Price>;
}

/** Set these mark prices (per whole token); other symbols keep theirs. */
export type SetMarketPrices = Command<'SetMarketPrices', { prices: Readonly<Record<string, Price>> }>;
export type MarketCommand = SetMarketPrices;

export const initialState = (): MarketState => ({ prices: PersistentMap.empty() });

export function evolve(state: MarketState, event: MarketEvent): MarketState {
  switch (event.type) {
    case 'MarketPricesSet': {
      let prices = state.prices;
      for (const [symbol, price] of Object.entries(event.data.prices)) prices = prices.set(symbol, marketPriceOf(price));
      return { prices };
    }
    default:
      return assertNever(event.type);
  }
}

function setPrices({ data, metadata }: SetMarketPrices, state: MarketState): MarketEvent[] {
  const entries = Object.entries(data.prices);
  if (entries.length === 0 || entries.length > MAX_PRICES_PER_SET) {
    throw refuse('VALIDATION_FAILED', `prices: give 1 to ${MAX_PRICES_PER_SET} prices`);
  }
  const bad = entries.find(([symbol]) => !MARKET_SYMBOL.test(symbol));
  if (bad) throw refuse('VALIDATION_FAILED', `prices: ${JSON.stringify(bad[0])} is not a symbol or mint (1 to 64 letters, digits or / _ . : -)`);
  const invalid = entries.find(([, price]) => typeof price !== 'bigint' || price < MIN_PRICE || price > MAX_PRICE);
  if (invalid) throw refuse('VALIDATION_FAILED', `prices.${invalid[0]}: a price must be above 0 and at most 1000000000 USD`);
  const changed = entries.filter(([symbol, price]) => state.prices.get(symbol) !== price);
  if (changed.length === 0) return [];
  const prices = Object.fromEntries(changed.map(([symbol, price]) => [symbol, priceText(price)]));
  return [{ type: 'MarketPricesSet', data: { prices, at: metadata.now.toISOString() } }];
}

export function decide(command: MarketCommand, state: MarketState): MarketEvent[] {
  switch (command.type) {
    case 'SetMarketPrices':
      return setPrices(command, state);
    default:
      return assertNever(command.type);
  }
}

export const marketDecider: Aggregate<MarketCommand, MarketState, MarketEvent> = { streamOf: marketStream, initialState, evolve, decide };
