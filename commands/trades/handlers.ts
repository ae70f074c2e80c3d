// The trades area's handlers, one per command of trades/commands.ts.
import type { Handlers } from '../tools.ts';
import type { TradeCommands } from './commands.ts';
import { closeTradeByUser, markTradePrice } from './manage.ts';

export const tradesHandlers: Handlers<TradeCommands> = {
  MarkTradePrice: markTradePrice,
  CloseUserTrade: closeTradeByUser,
};
