// Prices per whole token, as venues quote them: an integer of 10^-18 USD (attodollars) in a bigint,
// so a memecoin at 0.00000001 USD and a token at 100,000 USD are both exact. Money stays integer
// micro-USD (money.ts); every amount derived from a price rounds against the trader (trade/maths.ts).
// In events and stored JSON a price is its decimal USD text ("0.0000115", "100000"): exact,
// readable, and never confused with the micro-USD integers older events hold (see upcasting in
// domain/trade/events.ts and domain/market/events.ts).
import { z } from 'zod';
import { decimalString } from './money.ts';

/** 10^-18 USD per whole token. */
export type Price = bigint;

export const PRICE_DECIMALS = 18;
export const PRICE_SCALE = 10n ** 18n;
/** attodollars in one micro-USD: 10^12 */
export const ATTO_PER_MICRO = 10n ** 12n;
/** The largest price a venue may quote here: 1e9 USD per token. */
export const MAX_PRICE: Price = 1_000_000_000n * PRICE_SCALE;
/** The smallest: 10^-18 USD. */
export const MIN_PRICE: Price = 1n;

const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;

/** A price given in micro-USD (what events and commands held before prices were finer). */
export const priceFromMicro = (micro: number | bigint): Price => BigInt(micro) * ATTO_PER_MICRO;

/** A price's exact decimal USD text, without trailing zeros: "0.0000115", "100000". */
export function priceText(price: Price): string {
  const whole = price / PRICE_SCALE;
  const fraction = (price % PRICE_SCALE).toString().padStart(PRICE_DECIMALS, '0').replace(/0+$/, '');
  return fraction === '' ? whole.toString() : `${whole}.${fraction}`;
}

/**
 * `whole.fraction` USD as a price. `round`: a fraction finer than 10^-18 rounds half up (a
 * channel's text); otherwise it is refused (null), as is a price of 0 or above MAX_PRICE.
 */
export function priceFromDigits(whole: string, fraction: string, round = false): Price | null {
  if (!round && fraction.replace(/0+$/, '').length > PRICE_DECIMALS) return null;
  const kept = fraction.slice(0, PRICE_DECIMALS).padEnd(PRICE_DECIMALS, '0');
  let price = BigInt(whole || '0') * PRICE_SCALE + BigInt(kept);
  if (round && fraction.length > PRICE_DECIMALS && Number(fraction[PRICE_DECIMALS]) >= 5) price += 1n;
  return price < MIN_PRICE || price > MAX_PRICE ? null : price;
}

/** Decimal USD text ("0.0000115") as a price, exactly; null when malformed, finer than 10^-18, 0, or too large. */
export function parsePriceText(text: string): Price | null {
  const m = DECIMAL.exec(text);
  if (!m) return null;
  return priceFromDigits(m[1]!, m[2] ?? '');
}

/**
 * A JSON number as a price, through its shortest decimal text: the digits the sender wrote
 * (0.0000115 is read as 0.0000115, not as the binary double nearest it). Null when it has more than
 * 18 decimals, is not positive, or exceeds MAX_PRICE.
 */
export function priceFromNumber(usd: number): Price | null {
  if (!Number.isFinite(usd) || usd <= 0) return null;
  const [whole, fraction] = decimalString(usd).split('.') as [string, string];
  if (whole.length > 10) return null;
  return priceFromDigits(whole, fraction === '0' ? '' : fraction);
}

/**
 * A price as a JSON number: the double its decimal text reads as. Exact (its shortest text is the
 * price's own) whenever the price has at most 15 significant digits, which covers 0.00000001 and
 * 100000 and any price a venue quotes to 15 digits; finer prices are the nearest double.
 */
export const priceToNumber = (price: Price): number => Number(priceText(price));

/** The price as stored in an event: its decimal USD text. */
export const priceTextSchema = z
  .string()
  .regex(DECIMAL, 'a price is decimal USD text')
  .refine((text) => parsePriceText(text) !== null, 'a price is above 0, at most 1e9 USD, with at most 18 decimals');

/** A price in a request: a JSON number above 0, at most 1e9, with at most 18 decimals. */
export const priceNumberSchema = (field: string) =>
  z
    .number({ message: `${field} must be a number` })
    .gt(0, `${field} must be positive`)
    .max(1_000_000_000, `${field} must be at most 1000000000`)
    .refine((usd) => priceFromNumber(usd) !== null, `${field} has more than 18 decimals (the precision is 10^-18 USD)`);

/** Parses a stored price (decimal text); throws on a malformed one (a corrupt event, never input). */
export function storedPrice(text: string): Price {
  const price = parsePriceText(text);
  if (price === null) throw new RangeError(`not a stored price: ${JSON.stringify(text)}`);
  return price;
}

export const minPrice = (a: Price, b: Price): Price => (a < b ? a : b);
export const maxPrice = (a: Price, b: Price): Price => (a > b ? a : b);

/** A trigger the price crossed: at or above it for one set off from below, at or below it for one from above. */
export const crossed = (direction: 'above' | 'below', price: Price, trigger: Price): boolean => (direction === 'above' ? price >= trigger : price <= trigger);

/**
 * A level of a position the price reached: a long's stop-loss at or below it and its take-profit
 * at or above it, a short's mirrored. The one rule of the trade's ticks (domain/trade/mark.ts) and
 * of the manual lots' exits (domain/wallet/exits.ts).
 */
export const levelReached = (long: boolean, level: 'stop' | 'target', price: Price, at: Price): boolean =>
  crossed((level === 'target') === long ? 'above' : 'below', price, at);
