// The management commands: stop moves, new targets, cancel and close.
import { refuse } from '../shared/errors.ts';
import {
  cancelEntryDataSchema,
  closePositionDataSchema,
  moveStopDataSchema,
  parsed,
  setTargetsDataSchema,
  type CancelEntry,
  type ClosePosition,
  type MoveStop,
  type SetTargets,
} from './commands.ts';
import type { TradeEvent } from './events.ts';
import { checkStop, checkTargets, pendingRange, resolveTargets, type FillRange } from './levels.ts';
import { BPS, percentToBps } from './maths.ts';
import { exit, liveTrade, tightened, toBreakeven } from './position.ts';
import { targetForEvent, type Trade, type TradeState } from './state.ts';

/** The prices the trade is measured from: where a pending entry may fill, or the average fill. */
const rangeOf = (trade: Trade): FillRange =>
  trade.status === 'open' ? [trade.averageFill!, trade.averageFill!] : pendingRange(trade.entry, trade.slippageBps);

/** Stops only tighten: a looser one changes nothing. A pending entry's stop must still agree with its side. */
export function moveStop({ data: raw, metadata }: MoveStop, state: TradeState): TradeEvent[] {
  const trade = liveTrade(state);
  const data = parsed(moveStopDataSchema, raw);
  const at = metadata.now.toISOString();
  if ('to' in data) {
    if (trade.status !== 'open') throw refuse('TRADE_NOT_FILLED', 'breakeven needs a filled position');
    return toBreakeven(trade, at);
  }
  const moved = tightened(trade, data.price, 'STOP_LOSS', at);
  if (moved.length > 0 && trade.status === 'pending') checkStop(trade.side, rangeOf(trade), data.price);
  return moved;
}

/**
 * New targets for what has not been hit, validated as at the request. Their percents are of the
 * original size; without percents they share what remains. The same list again changes nothing.
 */
export function setTargets({ data: raw, metadata }: SetTargets, state: TradeState): TradeEvent[] {
  const trade = liveTrade(state);
  const { takeProfits } = parsed(setTargetsDataSchema, raw);
  checkTargets(
    trade.side,
    rangeOf(trade),
    takeProfits.map((tp) => tp.price),
  );
  const shareBps = trade.status === 'open' ? Number((trade.remainingUnits * BPS) / trade.filledUnits) : 10_000;
  const targets = resolveTargets(takeProfits, shareBps, trade.tiersHit + 1).map(targetForEvent);
  if (JSON.stringify(targets) === JSON.stringify(trade.targets.map(targetForEvent))) return [];
  return [{ type: 'TargetsSet', data: { tradeId: trade.tradeId, targets, at: metadata.now.toISOString() } }];
}

/** The exits (cancel, close) of a trade that has already ended are repeats: they change nothing. */
const ended = (state: TradeState): boolean => state.status === 'closed' || state.status === 'cancelled' || state.status === 'expired';

/** Removes an unfilled entry; a filled position keeps its stop and targets. */
export function cancelEntry({ data, metadata }: CancelEntry, state: TradeState): TradeEvent[] {
  parsed(cancelEntryDataSchema, data);
  if (ended(state)) return [];
  const trade = liveTrade(state);
  if (trade.status === 'open') return [];
  return [{ type: 'EntryCancelled', data: { tradeId: trade.tradeId, at: metadata.now.toISOString() } }];
}

/**
 * A reduce-only market exit of `closePercent` of the original size, capped at what remains. A
 * close of a trade still waiting for its entry cancels the entry: there is nothing to sell.
 */
export function closePosition({ data: raw, metadata }: ClosePosition, state: TradeState): TradeEvent[] {
  const data = parsed(closePositionDataSchema, raw);
  if (ended(state)) return [];
  const trade = liveTrade(state);
  // A partial close asked again by the same request (a signal job run again after a crash) is a repeat.
  if (data.requestId !== undefined && trade.reductions?.includes(data.requestId)) return [];
  const at = metadata.now.toISOString();
  if (trade.status === 'pending') return [{ type: 'EntryCancelled', data: { tradeId: trade.tradeId, at } }];
  const bps = BigInt(percentToBps(data.closePercent, 'closePercent'));
  const units = bps === BPS ? trade.remainingUnits : (trade.filledUnits * bps) / BPS;
  if (units === 0n) return [];
  return [exit(trade, units, data.price, { reason: data.reason, tier: null, ...(data.requestId !== undefined ? { requestId: data.requestId } : {}) }, at)];
}
