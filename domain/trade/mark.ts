// MarkPrice: one tick of the price watcher. Each step sees the trade as the steps before it left
// it: the entry fills or expires, then the stop, then the targets, then the trailing stop, then the mark.
import { markPriceDataSchema, parsed, type MarkPrice } from './commands.ts';
import type { StopKind, TradeEvent } from './events.ts';
import { BPS, movedInFavour, trailingStopFor } from './maths.ts';
import { fillPriceAt } from './levels.ts';
import { exit, filled, liveTrade, tightened, toBreakeven, type Why } from './position.ts';
import { levelReached, priceText, type Price } from '../shared/price.ts';
import { foldTrade, unrealizedPnlMicro, type Trade, type TradeState } from './state.ts';

interface Tick {
  price: Price;
  now: Date;
  at: string;
}

type Step = (trade: Trade, tick: Tick) => TradeEvent[];

/**
 * A pending entry past its expiry expires, even when this tick reaches it: the order left the
 * venue at expiresAt, before the tick. Otherwise a tick that reaches it fills it.
 */
const entryStep: Step = (trade, { price, now, at }) => {
  if (trade.status !== 'pending') return [];
  if (now.getTime() >= Date.parse(trade.expiresAt)) return [{ type: 'EntryExpired', data: { tradeId: trade.tradeId, at } }];
  const fill = fillPriceAt(trade.entry, trade.slippageBps, price);
  return fill === null ? [] : [filled(trade, fill, at)];
};

const reached = (trade: Trade, price: Price, level: Price, gains: boolean): boolean =>
  levelReached(trade.side !== 'short', gains ? 'target' : 'stop', price, level);

const stopReason: Record<StopKind, Why['reason']> = { STOP_LOSS: 'STOP_LOSS', BREAKEVEN: 'BREAKEVEN_STOP', TRAILING: 'TRAILING_STOP' };

/**
 * The stop comes first: a tick beyond both the stop and a target (a stop tightened past a target)
 * closes everything at the tick's price, the conservative reading of a gap. A stop is a market
 * order once touched, so it exits at the tick's price, never at a better one.
 */
const stopStep: Step = (trade, { price, at }) => {
  if (trade.status !== 'open' || !trade.stop || !reached(trade, price, trade.stop.price, false)) return [];
  return [exit(trade, trade.remainingUnits, price, { reason: stopReason[trade.stop.kind], tier: null }, at)];
};

/** Each target the tick reaches closes its tier at the target's price (a resting limit order). */
const targetsStep: Step = (trade, { price, at }) => {
  const events: TradeEvent[] = [];
  let current = trade;
  for (const target of trade.targets) {
    if (current.status !== 'open' || !reached(current, price, target.price, true)) break;
    const units = target.closesRest ? current.remainingUnits : (current.filledUnits * BigInt(target.closeBps)) / BPS;
    const hit = exit(current, units, target.price, { reason: 'TAKE_PROFIT', tier: target.tier }, at);
    current = foldTrade(current, [hit]);
    const moved = current.status === 'open' && current.breakevenOnTarget === target.tier ? toBreakeven(current, at) : [];
    current = foldTrade(current, moved);
    events.push(hit, ...moved);
  }
  return events;
};

/** Armed once the move from the average fill reaches the activation; then it trails the price by the callback. */
const trailingStep: Step = (trade, { price, at }) => {
  const { trailing } = trade;
  if (trade.status !== 'open' || !trailing) return [];
  const arming: TradeEvent[] =
    trailing.armedAt === null && movedInFavour(trade.side, trade.averageFill!, price, trailing.activationBps)
      ? [{ type: 'TrailingArmed', data: { tradeId: trade.tradeId, price: priceText(price), at } }]
      : [];
  if (trailing.armedAt === null && arming.length === 0) return [];
  return [...arming, ...tightened(trade, trailingStopFor(trade.side, price, trailing.callbackBps), 'TRAILING', at)];
};

/** The pool follows the unrealized PnL; a mark is recorded only when the figure changed. */
const markStep: Step = (trade, { price, at }) => {
  if (trade.status !== 'open') return [];
  const unrealized = unrealizedPnlMicro(trade, price);
  if (unrealized === trade.markedPnlMicro) return [];
  return [{ type: 'TradeMarked', data: { tradeId: trade.tradeId, price: priceText(price), unrealizedPnlMicro: unrealized, at } }];
};

const steps: Step[] = [entryStep, stopStep, targetsStep, trailingStep, markStep];

export function markPrice({ data, metadata }: MarkPrice, state: TradeState): TradeEvent[] {
  const trade = liveTrade(state);
  const { price } = parsed(markPriceDataSchema, data);
  const tick: Tick = { price, now: metadata.now, at: metadata.now.toISOString() };
  const events: TradeEvent[] = [];
  let current = trade;
  for (const step of steps) {
    const decided = step(current, tick);
    current = foldTrade(current, decided);
    events.push(...decided);
  }
  return events;
}
