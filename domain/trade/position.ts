// The events that move the position: a fill, an exit, a tighter stop. Shared by every command.
import { refuse } from '../shared/errors.ts';
import { priceText, type Price } from '../shared/price.ts';
import type { CloseReason, StopKind, TradeEvent } from './events.ts';
import { beyond, breakevenPrice, feeOn, grossPnl, marginFor, safe, sizeFor } from './maths.ts';
import { entryFeeShare, type Trade, type TradeState } from './state.ts';

/** The trade a command acts on: refused when there is none, or when it has ended. */
export function liveTrade(state: TradeState): Trade {
  if (state.status === 'none') throw refuse('TRADE_NOT_FOUND', 'no trade has this id');
  if (state.status !== 'pending' && state.status !== 'open') {
    throw refuse('TRADE_CLOSED', `the trade is ${state.status}`, { status: state.status });
  }
  return state;
}

/** The entry fills at `price`: the size the notional buys there, its fee, the margin it locks. */
export function filled(trade: Trade, price: Price, at: string): TradeEvent {
  const size = sizeFor(trade.notionalMicro, price, trade.decimals);
  const feeMicro = safe(feeOn(size, price, trade.decimals, trade.feeBps), 'the entry fee');
  return {
    type: 'TradeFilled',
    data: {
      tradeId: trade.tradeId,
      price: priceText(price),
      sizeUnits: size.toString(),
      marginMicro: marginFor(trade.notionalMicro, trade.leverage),
      feeMicro,
      at,
    },
  };
}

/**
 * The PnL of an exit of `units` at `price`, net of its fee and of its share of the entry fee.
 * The venue liquidates a position before it loses more than its margin, so the trade's realized
 * loss stops at the margin (the pool never owes the venue more than it locked).
 */
export function exitPnl(trade: Trade, units: bigint, price: Price): { pnl: number; fee: number } {
  const fee = safe(feeOn(units, price, trade.decimals, trade.feeBps), 'the exit fee');
  const gross = safe(grossPnl(trade.side, units, trade.averageFill!, price, trade.decimals), 'the exit PnL');
  const pnl = gross - fee - entryFeeShare(trade, units);
  return { pnl: Math.max(pnl, -trade.marginMicro - trade.realizedPnlMicro), fee };
}

export interface Why {
  reason: CloseReason;
  /** the take-profit tier, for TAKE_PROFIT */
  tier: number | null;
  /** the request a partial close answers (recorded on TradeReduced) */
  requestId?: string;
}

/** An exit: TradeClosed when it takes all that remains, else TargetHit (a tier) or TradeReduced. */
export function exit(trade: Trade, units: bigint, price: Price, why: Why, at: string): TradeEvent {
  const taken = units < trade.remainingUnits ? units : trade.remainingUnits;
  const { pnl, fee } = exitPnl(trade, taken, price);
  const remaining = trade.remainingUnits - taken;
  const exitData = {
    tradeId: trade.tradeId,
    price: priceText(price),
    closedUnits: taken.toString(),
    feeMicro: fee,
    realizedPnlMicro: pnl,
    remainingUnits: remaining.toString(),
    at,
  };
  if (remaining === 0n) {
    return { type: 'TradeClosed', data: { ...exitData, reason: why.reason, tier: why.tier, totalRealizedPnlMicro: trade.realizedPnlMicro + pnl } };
  }
  if (why.tier !== null) return { type: 'TargetHit', data: { ...exitData, tier: why.tier } };
  return { type: 'TradeReduced', data: { ...exitData, reason: why.reason, ...(why.requestId !== undefined ? { requestId: why.requestId } : {}) } };
}

/** A stop at `price` if it is tighter than the current one (stops only tighten), else nothing. */
export function tightened(trade: Trade, price: Price, kind: StopKind, at: string): TradeEvent[] {
  if (trade.stop && !beyond(trade.side, price, trade.stop.price)) return [];
  return [{ type: 'StopMoved', data: { tradeId: trade.tradeId, stop: priceText(price), kind, at } }];
}

/** The stop at breakeven: the average fill plus the round trip's fees (see maths.ts). */
export const toBreakeven = (trade: Trade, at: string): TradeEvent[] =>
  tightened(trade, breakevenPrice(trade.side, trade.averageFill!, trade.feeBps), 'BREAKEVEN', at);
