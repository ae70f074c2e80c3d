// Prices from their decimal text, exactly: the digits become an integer and only integer arithmetic
// follows, so `0.1 + 0.2`-style errors never reach a stop or a target.
import { toUnits } from '../shared/money.ts';

/** The largest price a signal may name: 1e9 USD per token, so every price is a safe integer of micro-USD. */
export const MAX_PRICE_MICRO = 1_000_000_000_000_000;

const MICRO_DIGITS = 6;
const POW10 = Array.from({ length: 40 }, (_, i) => 10n ** BigInt(i));

/**
 * `whole.fraction × 10^shift` USD in micro-USD (shift 3 for `k`, 6 for `m`), rounded half up to the
 * micro-USD (the market's unit: a finer price cannot be traded). Null when it rounds to 0 or exceeds
 * MAX_PRICE_MICRO. `whole` and `fraction` are ASCII digit strings, `fraction` possibly empty.
 */
export function decimalToMicro(whole: string, fraction: string, shift = 0): number | null {
  if (whole.replace(/^0+/, '').length + shift > 16) return null;
  const digits = BigInt(whole + fraction);
  const exponent = MICRO_DIGITS + shift - fraction.length;
  let micro: bigint;
  if (exponent >= 0) micro = digits * POW10[exponent]!;
  else {
    const unit = POW10[-exponent] ?? 10n ** BigInt(-exponent);
    micro = digits / unit + ((digits % unit) * 2n >= unit ? 1n : 0n);
  }
  return micro < 1n || micro > BigInt(MAX_PRICE_MICRO) ? null : Number(micro);
}

/** A JSON number as a price, through its shortest decimal text (what the sender wrote), half up; null out of range. */
export function numberToMicro(usd: number): number | null {
  if (!Number.isFinite(usd) || usd <= 0 || usd > MAX_PRICE_MICRO / 1_000_000) return null;
  const micro = toUnits(usd, MICRO_DIGITS);
  return micro < 1n ? null : Number(micro);
}

/** A micro-USD price as decimal USD text for messages ("67200", "0.000012"), exact. */
export function priceText(micro: number): string {
  const whole = Math.floor(micro / 1_000_000);
  const fraction = String(micro % 1_000_000).padStart(MICRO_DIGITS, '0').replace(/0+$/, '');
  return fraction === '' ? String(whole) : `${whole}.${fraction}`;
}
