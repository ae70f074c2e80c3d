// RequestTrade: the trade as the signal asked for it, filled at once or left pending.
import { refuse } from '../shared/errors.ts';
import { priceText, type Price } from '../shared/price.ts';
import { parsed, requestTradeDataSchema, type PriceEntry, type RequestTrade } from './commands.ts';
import type { TradeEvent, TradeEventOf } from './events.ts';
import { checkStop, checkTargets, fillPriceAt, pendingRange, resolveTargets, type FillRange } from './levels.ts';
import { percentToBps, sizeFor } from './maths.ts';
import { filled } from './position.ts';
import { entryForEvent, targetForEvent, tradeRequested, type TradeState } from './state.ts';

type Data = RequestTrade['data'];

/** Zones are written in either order by channels; the trade keeps them low to high. */
const normalized = (entry: PriceEntry): PriceEntry =>
  entry.kind === 'zone' && entry.low > entry.high ? { ...entry, low: entry.high, high: entry.low } : entry;

/**
 * The price the entry fills at right now, or null when it waits: a market entry and a zone holding
 * the mark fill at the mark; a breakout the market has already passed is a market order, at the mark.
 */
function immediateFill(entry: PriceEntry, slippageBps: number, mark: Price): Price | null {
  if (entry.kind === 'breakout') return fillPriceAt(entry, slippageBps, mark) === null ? null : mark;
  return fillPriceAt(entry, slippageBps, mark);
}

function checkShape(data: Data, now: Date): void {
  if (data.side === 'buy' && data.leverage !== 1) throw refuse('VALIDATION_FAILED', 'leverage: a buy is spot, its leverage is 1');
  if (data.breakevenOnTarget !== undefined && data.breakevenOnTarget > data.takeProfits.length) {
    throw refuse('VALIDATION_FAILED', 'breakevenOnTarget: there is no such take-profit tier');
  }
  if (Date.parse(data.expiresAt) <= now.getTime()) throw refuse('VALIDATION_FAILED', 'expiresAt must be after the request');
}

function checkLevels(data: Data, range: FillRange): void {
  if (data.stopLoss !== undefined) checkStop(data.side, range, data.stopLoss);
  checkTargets(
    data.side,
    range,
    data.takeProfits.map((tp) => tp.price),
  );
  // The notional must buy at least one base unit wherever the entry fills.
  if (sizeFor(data.notionalMicro, range[1], data.decimals) === 0n) {
    throw refuse('VALIDATION_FAILED', 'notionalMicro buys less than one base unit of the token');
  }
}

function requestEvent(data: Data, entry: PriceEntry, at: string): TradeEventOf<'TradeRequested'> {
  const { markPrice: _mark, takeProfits, stopLoss, trailing, breakevenOnTarget, ...rest } = data;
  return {
    type: 'TradeRequested',
    data: {
      ...rest,
      entry: entryForEvent(entry),
      stopLoss: stopLoss === undefined ? null : priceText(stopLoss),
      targets: resolveTargets(takeProfits, 10_000, 1).map(targetForEvent),
      trailing: trailing
        ? {
            activationBps: percentToBps(trailing.activationPercent, 'trailing.activationPercent'),
            callbackBps: percentToBps(trailing.callbackPercent, 'trailing.callbackPercent'),
          }
        : null,
      breakevenOnTarget: breakevenOnTarget ?? null,
      at,
    },
  };
}

/** A request repeated with the same tradeId changes nothing: the first one decided the trade. */
export function requestTrade({ data: raw, metadata }: RequestTrade, state: TradeState): TradeEvent[] {
  if (state.status !== 'none') return [];
  const data = parsed(requestTradeDataSchema, raw);
  checkShape(data, metadata.now);
  const entry = normalized(data.entry);
  const fill = immediateFill(entry, data.slippageBps, data.markPrice);
  checkLevels(data, fill === null ? pendingRange(entry, data.slippageBps) : [fill, fill]);
  const at = metadata.now.toISOString();
  const request = requestEvent(data, entry, at);
  if (fill === null) return [request, { type: 'EntryPending', data: { tradeId: data.tradeId, expiresAt: data.expiresAt, at } }];
  return [request, filled(tradeRequested(request), fill, at)];
}
