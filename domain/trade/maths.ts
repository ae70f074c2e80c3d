// The trade's integer maths. One rounding rule, against the trader (toward the pool): fees round
// up, PnL rounds down (a profit smaller, a loss larger), sizes round down. Prices are attodollars
// (domain/shared/price.ts), money micro-USD: a size times a price is divided by 10^(decimals + 12)
// to reach micro-USD. Everything is BigInt; every money figure leaving here is checked safe.
import { refuse } from '../shared/errors.ts';
import { hasAtMostDecimals, toUnits } from '../shared/money.ts';
import { ATTO_PER_MICRO, type Price } from '../shared/price.ts';
import type { Side } from './events.ts';

export const BPS = 10_000n;

/** +1 when the trade gains as the price rises (long, buy), −1 when it gains as it falls. */
export const direction = (side: Side): bigint => (side === 'short' ? -1n : 1n);

export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

export const ceilDiv = (a: bigint, b: bigint): bigint => -floorDiv(-a, b);

/** A figure for an event: refused when it leaves the safe range (absurd prices or sizes). */
export function safe(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw refuse('VALIDATION_FAILED', `${what} is out of range`);
  }
  return Number(value);
}

/** A percentage with at most 2 decimals as basis points. */
export function percentToBps(percent: number, field: string): number {
  if (!hasAtMostDecimals(percent, 2) || percent <= 0 || percent > 100) {
    throw refuse('VALIDATION_FAILED', `${field} must be above 0, at most 100, with at most 2 decimals`);
  }
  return Number(toUnits(percent, 2));
}

/** Base units × attodollars per whole token → micro-USD: 10^decimals × 10^12. */
const scale = (decimals: number): bigint => 10n ** BigInt(decimals) * ATTO_PER_MICRO;

/** Base units bought with `notionalMicro` at `price` per whole token (rounded down). */
export const sizeFor = (notionalMicro: number, price: Price, decimals: number): bigint => (BigInt(notionalMicro) * scale(decimals)) / price;

/** The venue fee on `units` traded at `price` (rounded up). */
export const feeOn = (units: bigint, price: Price, decimals: number, feeBps: number): bigint => ceilDiv(units * price * BigInt(feeBps), scale(decimals) * BPS);

/** What `units` are worth at `price`, in micro-USD (rounded down: what a sale of them pays). */
export const valueAt = (units: bigint, price: Price, decimals: number): bigint => (units * price) / scale(decimals);

/** The price PnL of `units` from `from` to `to`, before fees (rounded down). */
export const grossPnl = (side: Side, units: bigint, from: Price, to: Price, decimals: number): bigint =>
  floorDiv(direction(side) * units * (to - from), scale(decimals));

/** The margin the trade locks: notional / leverage, rounded up. */
export const marginFor = (notionalMicro: number, leverage: number): number => Number(ceilDiv(BigInt(notionalMicro), BigInt(leverage)));

/** Whether the price has moved `bps` in the trade's favour from `from` (exactly, no rounding). */
export const movedInFavour = (side: Side, from: Price, price: Price, bps: number): boolean => direction(side) * (price - from) * BPS >= from * BigInt(bps);

/** The trailing stop `callbackBps` behind `price`, rounded toward the price (the tighter stop). */
export const trailingStopFor = (side: Side, price: Price, callbackBps: number): Price =>
  side === 'short' ? floorDiv(price * (BPS + BigInt(callbackBps)), BPS) : ceilDiv(price * (BPS - BigInt(callbackBps)), BPS);

/**
 * The breakeven price: the exit price at which the round trip's fees are paid back. With fee rate
 * f on both legs, a long needs B − A = f·A + f·B, so B = A·(1 + f) / (1 − f); a short mirrors it.
 * Rounded against the trader: up for a long, down for a short.
 */
export function breakevenPrice(side: Side, averageFill: Price, feeBps: number): Price {
  const f = BigInt(feeBps);
  return side === 'short' ? floorDiv(averageFill * (BPS - f), BPS + f) : ceilDiv(averageFill * (BPS + f), BPS - f);
}

/** Whether `a` is a better exit (higher for a long, lower for a short) than `b`. */
export const beyond = (side: Side, a: Price, b: Price): boolean => (side === 'short' ? a < b : a > b);
