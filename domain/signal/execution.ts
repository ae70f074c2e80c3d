// How an open intent becomes a trade in one pool: the trade's request (token, side, leverage,
// entry, stop, targets, slippage, expiry) and its size, from the signal, the agent's execution
// defaults and the terms the pool accepted. Pure: the time and the venue's fee come in.
import type { SignalExecutionDefaults } from '../agent/record.ts';
import type { TradeSize } from '../pool/limits.ts';
import type { AgentTerms } from '../pool/settings.ts';
import { priceText, type Price } from '../shared/price.ts';
import type { TradeRequest } from '../transfer/plan.ts';
import type { OpenIntent, TakeProfit } from './intent.ts';
import { intentPrice } from './price.ts';

/**
 * Sizes are kept in base units of 10^-9 of a token on the simulated venue: sizes are bigints, so a
 * token at 10^-8 USD (10^19 units for 100 USD) and one at 100,000 USD (a unit is 10^-4 USD) both fit.
 */
export const TRADE_DECIMALS = 9;
/** A pending entry (zone, breakout) waits this long. */
export const ENTRY_EXPIRY_MS = 24 * 3600_000;
/** Slippage tolerance when the agent sets none: 0.5%. */
export const DEFAULT_SLIPPAGE_BPS = 50;
/** Share of the pool's free capital a trade takes when neither the signal nor the agent sizes it. */
export const DEFAULT_SIZE_PERCENT = 10;
/** The trailing stop of `trailingStop: true`: armed after a 1% move, then 0.5% behind the best price. */
export const DEFAULT_TRAILING = { activationPercent: 1, callbackPercent: 0.5 } as const;

export interface ExecutionContext {
  defaults: SignalExecutionDefaults | undefined;
  terms: AgentTerms;
  feeBps: number;
  now: Date;
  /** the venue's mark for the signal's token, the reference of a market entry's default levels; null when it has none */
  markPrice: Price | null;
}

/** A mode of the defaults: `percent` (the only one with a value today) or `none`, in any case. */
const isPercent = (mode: string | undefined) => mode?.toLowerCase() === 'percent';

/** Where the trade expects to enter: a zone's middle, a breakout's level, else the quoted or the venue's price. */
function referencePrice(intent: OpenIntent, markPrice: Price | null): Price | null {
  const { entry } = intent;
  if (entry.type === 'zone') return (intentPrice(entry.low) + intentPrice(entry.high)) / 2n;
  if (entry.type === 'breakout') return intentPrice(entry.price);
  return entry.price === undefined ? markPrice : intentPrice(entry.price);
}

/** `percent`% from `reference`, against the trade (a stop) or with it (a target), rounded toward the reference; as intent text. */
function away(reference: Price, percent: number, long: boolean, withTrade: boolean): string {
  const bps = BigInt(Math.round(percent * 100));
  const up = long === withTrade;
  const moved = (reference * (10_000n + (up ? bps : -bps))) / 10_000n;
  return priceText(moved > 0n ? moved : 1n);
}

/**
 * The stop and targets: the signal's, unless `signalOverridesDefaults: false` puts the agent's
 * first; a missing one comes from the defaults (`stopLossMode`/`takeProfitMode` `percent` with a
 * value, or `takeProfitTiers` at `whenPositionPercent` from the entry), measured from the reference.
 */
function levelsOf(intent: OpenIntent, defaults: SignalExecutionDefaults | undefined, reference: Price | null, long: boolean) {
  const signalFirst = defaults?.signalOverridesDefaults !== false;
  let stopLoss = signalFirst ? intent.stopLoss : undefined;
  let takeProfits: TakeProfit[] = signalFirst ? intent.takeProfits : [];
  if (reference !== null && defaults) {
    if (stopLoss === undefined && isPercent(defaults.stopLossMode) && (defaults.stopLossValue ?? 0) > 0) {
      stopLoss = away(reference, Math.min(defaults.stopLossValue!, 99), long, false);
    }
    if (takeProfits.length === 0 && defaults.takeProfitTiers?.length) {
      takeProfits = defaults.takeProfitTiers
        .filter((tier) => tier.whenPositionPercent > 0)
        .map((tier) => ({ price: away(reference, tier.whenPositionPercent, long, true), closePercent: tier.closePercent }));
    } else if (takeProfits.length === 0 && isPercent(defaults.takeProfitMode) && (defaults.takeProfitValue ?? 0) > 0) {
      takeProfits = [{ price: away(reference, defaults.takeProfitValue!, long, true) }];
    }
  }
  if (stopLoss === undefined && !signalFirst) stopLoss = intent.stopLoss;
  if (takeProfits.length === 0 && !signalFirst) takeProfits = intent.takeProfits;
  return { stopLoss, takeProfits };
}

export type TradeOrder = { ok: true; request: TradeRequest; size: TradeSize } | { ok: false; skipReason: 'UNSUPPORTED_SIDE'; message: string };

const wholePercent = (p: number | undefined): number | null => (p !== undefined && p > 0 && p <= 100 ? Math.round(p * 100) / 100 : null);

/** The signal's percents win; without them the agent's tiers when they match the targets one to one; else the trade splits evenly. */
function targetsOf(takeProfits: TakeProfit[], defaults: SignalExecutionDefaults | undefined) {
  const tiers = defaults?.takeProfitTiers;
  const useTiers = tiers !== undefined && tiers.length === takeProfits.length && takeProfits.every((tp) => tp.closePercent === undefined);
  return takeProfits.map((tp, i) => {
    const closePercent = tp.closePercent ?? (useTiers ? (wholePercent(tiers[i]!.closePercent) ?? undefined) : undefined);
    return closePercent === undefined ? { price: tp.price } : { price: tp.price, closePercent };
  });
}

function sizeOf(intent: OpenIntent, defaults: SignalExecutionDefaults | undefined, terms: AgentTerms): TradeSize {
  if (intent.size?.type === 'usd') return { marginMicro: intent.size.amountMicro };
  const percent =
    (intent.size?.type === 'percent' ? wholePercent(intent.size.percent) : null) ??
    wholePercent(defaults?.tradeSizeValue) ??
    wholePercent(terms.recommendedPerTradePercent);
  return { percent: percent ?? DEFAULT_SIZE_PERCENT };
}

export function tradeOrderOf(intent: OpenIntent, ctx: ExecutionContext): TradeOrder {
  const { defaults, terms } = ctx;
  const spot = terms.venue !== 'PERP_VENUE';
  const long = intent.side === 'long' || intent.side === 'buy';
  if (spot && !long) return { ok: false, skipReason: 'UNSUPPORTED_SIDE', message: `a ${intent.side} cannot open on a spot venue` };
  const side = spot ? 'buy' : long ? 'long' : 'short';
  const cap = Math.max(1, Math.floor(Math.min(terms.maxLeverage, defaults?.leverageMax ?? Infinity)));
  const leverage = spot ? 1 : Math.min(cap, Math.max(1, Math.floor(intent.leverage ?? 1)));
  const { entry } = intent;
  const slippage = defaults?.slippageTolerance;
  const { stopLoss, takeProfits } = levelsOf(intent, defaults, referencePrice(intent, ctx.markPrice), long);
  const request: TradeRequest = {
    token: intent.token,
    decimals: TRADE_DECIMALS,
    side,
    leverage,
    entry:
      entry.type === 'market'
        ? { kind: 'market' }
        : entry.type === 'zone'
          ? { kind: 'zone', low: entry.low, high: entry.high }
          : { kind: 'breakout', direction: entry.direction, price: entry.price },
    ...(stopLoss !== undefined ? { stopLoss } : {}),
    takeProfits: targetsOf(takeProfits, defaults),
    ...(defaults?.trailingStop ? { trailing: { ...DEFAULT_TRAILING } } : {}),
    slippageBps: slippage !== undefined ? Math.min(5_000, Math.round(slippage * 100)) : DEFAULT_SLIPPAGE_BPS,
    feeBps: ctx.feeBps,
    expiresAt: new Date(ctx.now.getTime() + ENTRY_EXPIRY_MS).toISOString(),
  };
  return { ok: true, request, size: sizeOf(intent, defaults, terms) };
}
