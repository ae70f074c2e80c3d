// Money is integer micro-USD (6 decimals, the precision of USDC). Conversions from and to the
// API's decimal numbers go through strings: no floating point arithmetic on money.
import { z } from 'zod';

export type MicroUsd = number;
export const MICRO = 1_000_000;
const MICRO_BIG = 1_000_000n;

/** A non-negative micro-USD amount in an event. */
export const microUsdSchema = z.number().int().min(0);

/** SOL amounts are integer lamports. */
export const LAMPORTS_PER_SOL = 1_000_000_000n;

/** The exact decimal digits of a JS number (handles exponent notation). */
export function decimalString(value: number): string {
  const s = String(value);
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/i.exec(s);
  if (!m) throw new RangeError(`not a finite number: ${s}`);
  const [, sign, int, frac = '', exp = '0'] = m;
  const e = Number(exp);
  let digits = int + frac;
  let point = int.length + e;
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  } else if (point > digits.length) {
    digits = digits + '0'.repeat(point - digits.length);
  }
  return `${sign}${digits.slice(0, point)}.${digits.slice(point) || '0'}`;
}

/** Whether a finite number has at most `decimals` digits after the point (as written, exactly). */
export function hasAtMostDecimals(value: number, decimals: number): boolean {
  if (!Number.isFinite(value)) return false;
  const frac = decimalString(value).split('.')[1]!.replace(/0+$/, '');
  return frac.length <= decimals;
}

/**
 * A USD amount in a request: a JSON number above 0, at most 1e9, with at most 6 decimals, so it is
 * a whole number of micro-USD (`usdToMicro` converts it without rounding).
 */
export const usdAmountSchema = (field: string) =>
  z
    .number({ message: `${field} must be a number` })
    .gt(0, `${field} must be positive`)
    .max(1_000_000_000, `${field} must be at most 1000000000`)
    .refine((usd) => hasAtMostDecimals(usd, 6), `${field} has more than 6 decimals (the precision is 1 micro-USD)`);

/** Parses a decimal amount (USD or token) to integer units of 10^-decimals, rounding half up. */
export function toUnits(value: number, decimals: number): bigint {
  const [whole, frac] = decimalString(value).split('.') as [string, string];
  const negative = whole.startsWith('-');
  const padded = (frac + '0'.repeat(decimals + 1)).slice(0, decimals + 1);
  let units = BigInt(whole.replace('-', '')) * 10n ** BigInt(decimals) + BigInt(padded.slice(0, decimals) || '0');
  if (Number(padded[decimals]) >= 5) units += 1n;
  return negative ? -units : units;
}

/** USD number → micro-USD integer; throws RangeError outside the safe integer range. */
export function usdToMicro(usd: number): MicroUsd {
  const units = toUnits(usd, 6);
  if (units > BigInt(Number.MAX_SAFE_INTEGER) || units < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError('amount out of range');
  }
  return Number(units);
}

/**
 * micro-USD → USD number with 6 decimals, for JSON. For a safe integer the division is the
 * answer: IEEE 754 rounds the exact quotient of two exactly represented numbers once, to the
 * nearest double, which is the same double the decimal text parses to (tested for both paths).
 */
export function microToUsd(micro: MicroUsd | bigint): number {
  if (typeof micro === 'number' && Number.isSafeInteger(micro)) return micro / MICRO;
  return microToUsdByText(micro);
}

/** The same conversion through the decimal text, for any integer. */
export function microToUsdByText(micro: MicroUsd | bigint): number {
  return Number(microToDecimal(micro));
}

/** micro-USD as exact decimal text with its 6 places, e.g. 12345678 → "12.345678" (files and tables, never rounded). */
export function microToDecimal(micro: MicroUsd | bigint): string {
  if (typeof micro === 'number' && Number.isSafeInteger(micro)) {
    // exact in doubles: a safe integer's quotient by 10^6, truncated, and its remainder
    const abs = Math.abs(micro);
    const fraction = abs % MICRO;
    return `${micro < 0 ? '-' : ''}${(abs - fraction) / MICRO}.${fraction < 100_000 ? String(fraction).padStart(6, '0') : fraction}`;
  }
  const big = BigInt(micro);
  const negative = big < 0n;
  const abs = negative ? -big : big;
  return `${negative ? '-' : ''}${abs / MICRO_BIG}.${(abs % MICRO_BIG).toString().padStart(6, '0')}`;
}

/** floor(amount × numerator / denominator), exact. */
export function mulDiv(amount: MicroUsd, numerator: bigint, denominator: bigint): MicroUsd {
  const big = BigInt(amount) * numerator;
  const q = big / denominator;
  // BigInt division truncates toward zero; floor for negatives.
  return Number(big < 0n && big % denominator !== 0n ? q - 1n : q);
}

/** A percentage given as a number (e.g. 12.5) as an exact fraction [numerator, denominator] of 1. */
export function percentFraction(percent: number): readonly [bigint, bigint] {
  let fraction = fractions.get(percent);
  if (!fraction) {
    fraction = [toUnits(percent, 6), 100n * MICRO_BIG]; // percent in millionths
    // A few rates recur (every pool's figures ask for its fee rate): the decimal parse once each.
    if (fractions.size >= 1024) fractions.clear();
    fractions.set(percent, fraction);
  }
  return fraction;
}
const fractions = new Map<number, readonly [bigint, bigint]>();
