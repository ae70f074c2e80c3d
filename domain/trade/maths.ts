// The trade's integer maths. One rounding rule, against the trader (toward the pool): fees round
// up, PnL rounds down (a profit smaller, a loss larger), sizes round down. Products of a size and
// a price pass 2^53, so they are taken in BigInt; every figure leaving here is a safe integer.
import { refuse } from '../shared/errors.ts';
import { hasAtMostDecimals, toUnits } from '../shared/money.ts';
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

const scale = (decimals: number): bigint => 10n ** BigInt(decimals);

/** Base units bought with `notionalMicro` at `priceMicro` per whole token (rounded down). */
export const sizeFor = (notionalMicro: number, priceMicro: number, decimals: number): bigint =>
  (BigInt(notionalMicro) * scale(decimals)) / BigInt(priceMicro);

/** The venue fee on `units` traded at `priceMicro` (rounded up). */
export const feeOn = (units: bigint, priceMicro: number, decimals: number, feeBps: number): bigint =>
  ceilDiv(units * BigInt(priceMicro) * BigInt(feeBps), scale(decimals) * BPS);

/** The price PnL of `units` from `fromMicro` to `toMicro`, before fees (rounded down). */
export const grossPnl = (side: Side, units: bigint, fromMicro: number, toMicro: number, decimals: number): bigint =>
  floorDiv(direction(side) * units * BigInt(toMicro - fromMicro), scale(decimals));

/** The margin the trade locks: notional / leverage, rounded up. */
export const marginFor = (notionalMicro: number, leverage: number): number => Number(ceilDiv(BigInt(notionalMicro), BigInt(leverage)));

/** Whether the price has moved `bps` in the trade's favour from `fromMicro` (exactly, no rounding). */
export const movedInFavour = (side: Side, fromMicro: number, priceMicro: number, bps: number): boolean =>
  direction(side) * (BigInt(priceMicro) - BigInt(fromMicro)) * BPS >= BigInt(fromMicro) * BigInt(bps);

/** The trailing stop `callbackBps` behind `priceMicro`, rounded toward the price (the tighter stop). */
export const trailingStopFor = (side: Side, priceMicro: number, callbackBps: number): number =>
  side === 'short'
    ? Number(floorDiv(BigInt(priceMicro) * (BPS + BigInt(callbackBps)), BPS))
    : Number(ceilDiv(BigInt(priceMicro) * (BPS - BigInt(callbackBps)), BPS));

/**
 * The breakeven price: the exit price at which the round trip's fees are paid back. With fee rate
 * f on both legs, a long needs B − A = f·A + f·B, so B = A·(1 + f) / (1 − f); a short mirrors it.
 * Rounded against the trader: up for a long, down for a short.
 */
export function breakevenPrice(side: Side, averageFillMicro: number, feeBps: number): number {
  const a = BigInt(averageFillMicro);
  const f = BigInt(feeBps);
  return side === 'short' ? Number(floorDiv(a * (BPS - f), BPS + f)) : Number(ceilDiv(a * (BPS + f), BPS - f));
}

/** Whether `a` is a better exit (higher for a long, lower for a short) than `b`. */
export const beyond = (side: Side, a: number, b: number): boolean => (side === 'short' ? a < b : a > b);
