// Builders of expected interpretations, so each message of the tables reads as what it means.
// Prices are decimal USD text: `usd` writes whole numbers, `m` a count of micro-USD (the decimals
// written out as an integer), `px` any exact decimal, so the expectations never reuse the parser.
import type { Test } from 'tap';
import type { Entry, Intent, Interpretation, OpenIntent, Side, TakeProfit, UnmatchedReason } from '../../../domain/signal/index.ts';
import { parseSignalText } from '../../../domain/signal/index.ts';
import { priceFromMicro, priceText } from '../../../domain/shared/price.ts';

/** Whole USD as a price's text. */
export const usd = (whole: number): string => String(whole);
/** A count of micro-USD as a price's text: m(148_200_000) is "148.2". */
export const m = (micro: number): string => priceText(priceFromMicro(micro));
/** An exact decimal price, written as the text it is ("0.0000215"). */
export const px = (text: string): string => text;

export const zone = (low: string, high = low): Entry => ({ type: 'zone', low, high });
export const market = (price?: string): Entry => (price === undefined ? { type: 'market' } : { type: 'market', price });
export const above = (price: string): Entry => ({ type: 'breakout', direction: 'above', price });
export const below = (price: string): Entry => ({ type: 'breakout', direction: 'below', price });
export const tp = (price: string, closePercent?: number): TakeProfit => (closePercent === undefined ? { price } : { price, closePercent });

export function open(token: string, side: Side, entry: Entry, levels: { stopLoss?: string; takeProfits?: TakeProfit[]; leverage?: number } = {}): OpenIntent {
  return { action: 'open', token, side, entry, ...levels, takeProfits: levels.takeProfits ?? [] };
}

type Expected =
  | { kind: 'signal'; intents: Intent[] }
  | { kind: 'unmatched'; reason: UnmatchedReason }
  | { kind: 'skipped'; codes: string[]; intents: Intent[] };

export const signal = (...intents: Intent[]): Expected => ({ kind: 'signal', intents });
export const unmatched = (reason: UnmatchedReason): Expected => ({ kind: 'unmatched', reason });
export const skipped = (codes: string[], ...intents: Intent[]): Expected => ({ kind: 'skipped', codes, intents });

/** The interpretation without its rule version, and a skip's problems reduced to their codes. */
export function comparable(interpretation: Interpretation): Expected {
  if (interpretation.kind === 'signal') return { kind: 'signal', intents: interpretation.intents };
  if (interpretation.kind === 'unmatched') return { kind: 'unmatched', reason: interpretation.reason };
  return { kind: 'skipped', codes: interpretation.problems.map((p) => p.code), intents: interpretation.intents };
}

/** Each message of the table, read with the built-in keywords, gives exactly its interpretation. */
export function checkTable(t: Test, table: ReadonlyArray<[string, Expected]>): void {
  for (const [text, expected] of table) t.strictSame(comparable(parseSignalText(text)), expected, JSON.stringify(text));
}
