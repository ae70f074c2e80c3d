// The market area's command (set the simulated venue's prices): its data. No handler here.
import type { Price } from '../../domain/shared/price.ts';

export interface SetMarketPricesData {
  /** per whole token, by symbol or mint */
  prices: Readonly<Record<string, Price>>;
}

/** The market area's commands: each one's data and result. */
export interface MarketCommands {
  SetMarketPrices: { data: SetMarketPricesData; result: { changed: number } };
}
