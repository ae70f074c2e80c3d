// The trades area's commands (mark a price, close a user's trade): their data. No handler here.
import type { Trade } from '../../domain/trade/decide.ts';
import type { Price } from '../../domain/shared/price.ts';

export interface MarkTradeData {
  tradeId: string;
  price: Price;
}

export interface CloseTradeData {
  tradeId: string;
  /** the caller: only the trade's own user closes it */
  userId: string;
}

/** The trades area's commands: each one's data and result. */
export interface TradeCommands {
  MarkTradePrice: { data: MarkTradeData; result: { status: Trade['status'] } };
  CloseUserTrade: { data: CloseTradeData; result: { trade: Trade } };
}
