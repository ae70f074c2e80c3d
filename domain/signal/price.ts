// Prices from their decimal text, exactly: the digits become an integer of attodollars
// (domain/shared/price.ts) and only integer arithmetic follows, so `0.1 + 0.2`-style errors never
// reach a stop or a target, and a memecoin's 0.00001120 stays 0.00001120.
import { decimalString } from '../shared/money.ts';
import { parsePriceText, priceFromDigits, storedPrice, type Price } from '../shared/price.ts';

/** The largest price a signal may name: 1e9 USD per token. */
export const MAX_PRICE_USD = 1_000_000_000;

/**
 * `whole.fraction × 10^shift` USD (shift 3 for `k`, 6 for `m`) as a price, rounded half up to
 * 10^-18 USD. Null when it rounds to 0 or exceeds 1e9 USD. `whole` and `fraction` are ASCII digit
 * strings, `fraction` possibly empty.
 */
export function decimalToPrice(whole: string, fraction: string, shift = 0): Price | null {
  if (whole.replace(/^0+/, '').length + shift > 10) return null;
  const padded = fraction.padEnd(shift, '0');
  return priceFromDigits(whole + padded.slice(0, shift), padded.slice(shift), true);
}

/** A JSON number as a price, through its shortest decimal text (what the sender wrote), half up at 10^-18; null out of range. */
export function numberToPrice(usd: number): Price | null {
  if (!Number.isFinite(usd) || usd <= 0 || usd > MAX_PRICE_USD) return null;
  const [whole, fraction] = decimalString(usd).split('.') as [string, string];
  return decimalToPrice(whole, fraction === '0' ? '' : fraction);
}

/** An intent's price (decimal USD text) as a price. */
export const intentPrice = (text: string): Price => storedPrice(text);

/** Whether an intent's price text is one (for the schema). */
export const isIntentPrice = (text: string): boolean => parsePriceText(text) !== null;
