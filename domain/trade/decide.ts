// The decider of one trade of one follower pool (stream `trade-{tradeId}`): its own lifecycle,
// pending → open → closed (or cancelled, expired). The pool's money side follows these events.
import { assertNever, type Aggregate } from '../shared/decider.ts';
import type { TradeCommand } from './commands.ts';
import type { TradeEvent } from './events.ts';
import { cancelEntry, closePosition, moveStop, setTargets } from './manage.ts';
import { markPrice } from './mark.ts';
import { requestTrade } from './request.ts';
import { evolve, initialState, tradeStream, type TradeState } from './state.ts';

export type * from './commands.ts';
export type { TradeEvent } from './events.ts';
export { unrealizedPnlMicro, type Trade, type TradeState, type TradeStatus } from './state.ts';

export function decide(command: TradeCommand, state: TradeState): TradeEvent[] {
  switch (command.type) {
    case 'RequestTrade':
      return requestTrade(command, state);
    case 'MarkPrice':
      return markPrice(command, state);
    case 'MoveStop':
      return moveStop(command, state);
    case 'SetTargets':
      return setTargets(command, state);
    case 'CancelEntry':
      return cancelEntry(command, state);
    case 'ClosePosition':
      return closePosition(command, state);
    default:
      return assertNever(command);
  }
}

export const tradeDecider: Aggregate<TradeCommand, TradeState, TradeEvent> = { streamOf: tradeStream, initialState, evolve, decide };
