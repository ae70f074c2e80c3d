// An administrator sets the simulated venue's mark prices.
import type { Command } from '../../domain/shared/decider.ts';
import { MARKET_PRICES, marketDecider } from '../../domain/market/decide.ts';
import type { Tools } from '../tools.ts';
import { requireSimulatedVenue } from '../simulated-venue.ts';
import type { SetMarketPricesData } from './commands.ts';

/** `changed`: how many of the prices differed from the market's. */
export async function setMarketPrices({ data }: Command<'SetMarketPrices', SetMarketPricesData>, tools: Tools): Promise<{ changed: number }> {
  requireSimulatedVenue(tools.deps.config, 'setting mark prices');
  const { events } = await tools.execute(marketDecider, MARKET_PRICES, { type: 'SetMarketPrices', data });
  return { changed: events.reduce((n, e) => n + Object.keys(e.data.prices).length, 0) };
}
