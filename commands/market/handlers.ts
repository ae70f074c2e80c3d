// The market area's handlers, one per command of market/commands.ts.
import type { Handlers } from '../tools.ts';
import type { MarketCommands } from './commands.ts';
import { setMarketPrices } from './set-prices.ts';

export const marketHandlers: Handlers<MarketCommands> = {
  SetMarketPrices: setMarketPrices,
};
