// The decider of one trade of one follower pool (stream `trade-{tradeId}`): its own lifecycle,
// pending → open → closed (or cancelled, expired). The pool's money side follows these events.
import { assertNever, type Aggregate } from '../shared/decider.ts';
import type { TradeCommand } from './commands.ts';
import type { TradeEvent } from './events.ts';
import { cancelEntry, closePosition, moveStop, setTargets } from './manage.ts';
import { markPrice } from './mark.ts';
import { requestTrade } from './request.ts';
import { marginFor } from './maths.ts';
import { evolve, foldTrade, initialState, tradeReturnId, tradeStream, type TradeState } from './state.ts';
import { parsed, rejectTradeDataSchema, type RejectTrade } from './commands.ts';

export type * from './commands.ts';
export type { TradeEvent } from './events.ts';
export { tradeReturnId, unrealizedPnlMicro, type Trade, type TradeState, type TradeStatus } from './state.ts';

/** Only a trade never requested can be rejected; a rejection or a request decided first stands. */
function rejectTrade({ data: raw, metadata }: RejectTrade, state: TradeState): TradeEvent[] {
  const data = parsed(rejectTradeDataSchema, raw);
  if (state.status !== 'none') return [];
  return [{ type: 'TradeRejected', data: { ...data, at: metadata.now.toISOString() } }];
}

/**
 * A trade that ends (closed, cancelled or expired) settles with its pool in the same decision: it
 * records what it pays back (the margin and the PnL it realized), the debit of its return transfer.
 */
function settled(state: TradeState, events: TradeEvent[], at: Date): TradeEvent[] {
  if ((state.status !== 'pending' && state.status !== 'open') || events.length === 0) return events;
  const after = foldTrade(state, events);
  if (after.status === 'pending' || after.status === 'open') return events;
  const marginMicro = marginFor(state.notionalMicro, state.leverage);
  const realizedPnlMicro = after.realizedPnlMicro;
  const { tradeId, poolId } = state;
  return [
    ...events,
    {
      type: 'TradeSettled',
      data: {
        tradeId,
        poolId,
        transferId: tradeReturnId(tradeId),
        marginMicro,
        realizedPnlMicro,
        returnedMicro: marginMicro + realizedPnlMicro,
        at: at.toISOString(),
      },
    },
  ];
}

export function decide(command: TradeCommand, state: TradeState): TradeEvent[] {
  return settled(state, decideOnly(command, state), command.metadata.now);
}

function decideOnly(command: TradeCommand, state: TradeState): TradeEvent[] {
  switch (command.type) {
    case 'RequestTrade':
      return requestTrade(command, state);
    case 'RejectTrade':
      return rejectTrade(command, state);
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
