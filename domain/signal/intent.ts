// What a signal means, whichever way it arrived: a structured body and a text message are both read
// into one `Interpretation`, kept in the agent's inbox and executed by the trade workers. Prices are
// decimal USD text per whole token, exact to 10^-18 (domain/shared/price.ts); percents and leverage
// are plain numbers.
import { z } from 'zod';
import { priceFromMicro, priceText, priceTextSchema } from '../shared/price.ts';

/** A price per whole token as decimal USD text ("0.0000115"). */
export const intentPriceSchema = priceTextSchema;

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const legacyPrice = (v: unknown): unknown => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 ? priceText(priceFromMicro(v)) : v);
const withPrices = (o: Json, keys: readonly string[]): Json =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, keys.includes(k) ? legacyPrice(v) : v]));

function upcastIntent(intent: unknown): unknown {
  if (!isRecord(intent)) return intent;
  const up = withPrices(intent, ['stopLoss']);
  if (isRecord(up.entry)) up.entry = withPrices(up.entry, ['low', 'high', 'price']);
  if (Array.isArray(up.takeProfits)) up.takeProfits = up.takeProfits.map((t) => (isRecord(t) ? withPrices(t, ['price']) : t));
  return up;
}

/**
 * An interpretation as stored, old or new: those stored before prices were finer held integer
 * micro-USD prices, read as the same price in today's text. Pure; never rewrites the event.
 */
export function upcastInterpretation(raw: unknown): unknown {
  if (!isRecord(raw) || !Array.isArray(raw.intents)) return raw;
  return { ...raw, intents: raw.intents.map(upcastIntent) };
}

/** A percent in (0, 100]. */
export const percentSchema = z.number().gt(0).max(100);

export const sides = ['long', 'short', 'buy', 'sell'] as const;
export const sideSchema = z.enum(sides);
export type Side = z.infer<typeof sideSchema>;

/** buy reads as long and sell as short wherever a direction matters (levels, finding a trade). */
export const directionOf = (side: Side): 'long' | 'short' => (side === 'long' || side === 'buy' ? 'long' : 'short');

/**
 * How a trade is entered. `market`: now, within the slippage tolerance; `price` is the current price
 * the message quoted ("CMP 67,000"), used only to check the levels. `zone`: a single price is a zone
 * with low = high. `breakout`: a stop entry once the price goes above / below `price`.
 */
export const entrySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('market'), price: intentPriceSchema.optional() }),
  z.object({ type: z.literal('zone'), low: intentPriceSchema, high: intentPriceSchema }),
  z.object({ type: z.literal('breakout'), direction: z.enum(['above', 'below']), price: intentPriceSchema }),
]);
export type Entry = z.infer<typeof entrySchema>;

/** A target; without `closePercent` the split is left to execution (the agent's tiers, else even). */
export const takeProfitSchema = z.object({ price: intentPriceSchema, closePercent: percentSchema.optional() });
export type TakeProfit = z.infer<typeof takeProfitSchema>;

export const sizeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('percent'), percent: percentSchema }),
  z.object({ type: z.literal('usd'), amountMicro: z.number().int().min(1) }),
]);
export type Size = z.infer<typeof sizeSchema>;

/** A normalised symbol (upper case, quote stripped: `BTC`) or a mint, kept as written. */
const tokenSchema = z.string().min(1).max(64);

const followUp = { token: tokenSchema.optional(), side: sideSchema.optional() };

export const openIntentSchema = z.object({
  action: z.literal('open'),
  token: tokenSchema,
  side: sideSchema,
  entry: entrySchema,
  stopLoss: intentPriceSchema.optional(),
  takeProfits: z.array(takeProfitSchema),
  leverage: z.number().min(1).optional(),
  /** absent: the agent's `signalExecutionDefaults.tradeSizeValue` decides */
  size: sizeSchema.optional(),
});

/**
 * One thing a signal asks for. Follow-ups (close, cancel, update) name their trade by token and side
 * when the message does; `resolveTarget` finds the trade.
 */
export const intentSchema = z.discriminatedUnion('action', [
  openIntentSchema,
  /** a reduce-only market exit of `closePercent` of the original filled size (100 = all) */
  z.object({ action: z.literal('close'), ...followUp, closePercent: percentSchema }),
  /** removes the unfilled entries; a filled position keeps its stop and targets */
  z.object({ action: z.literal('cancel'), ...followUp }),
  /** a new stop (a price, breakeven: the fill plus fees, or a target's price: "move SL to TP1"), and/or new targets */
  z.object({
    action: z.literal('update'),
    ...followUp,
    stopLoss: intentPriceSchema.optional(),
    breakeven: z.literal(true).optional(),
    /** the stop moves to the price of this target of the trade (1 = the first) */
    stopLossAtTarget: z.number().int().min(1).max(20).optional(),
    takeProfits: z.array(takeProfitSchema).min(1).optional(),
  }),
]);
export type Intent = z.infer<typeof intentSchema>;
export type OpenIntent = z.infer<typeof openIntentSchema>;

/** Why the levels of an open contradict its side; the names are stable (inbox, refusals). */
export const levelProblemCodes = [
  'STOP_LOSS_NOT_BELOW_ENTRY',
  'STOP_LOSS_NOT_ABOVE_ENTRY',
  'TAKE_PROFIT_NOT_ABOVE_ENTRY',
  'TAKE_PROFIT_NOT_BELOW_ENTRY',
  'TAKE_PROFIT_NOT_ABOVE_STOP_LOSS',
  'TAKE_PROFIT_NOT_BELOW_STOP_LOSS',
  'PRICE_OUT_OF_RANGE',
] as const;
export const levelProblemSchema = z.object({
  code: z.enum(levelProblemCodes),
  /** index of the intent in `intents` */
  intent: z.number().int().min(0),
  message: z.string(),
});
export type LevelProblem = z.infer<typeof levelProblemSchema>;

/**
 * Why a text read as no signal: `NO_SIGNAL` nothing of a trade; `RESULT_REPORT` a report of a trade's
 * result ("TP2 hit"); `MISSING_TOKEN` / `MISSING_SIDE` levels of a trade without the token or side;
 * `MISSING_LEVELS` a side and a token with nothing to trade on ("long BTC was a great call");
 * `NO_STRATEGY_PREFIX` the rule's `strategyPrefix` is absent; `TEXT_TOO_LONG` over the parsed length.
 */
export const unmatchedReasons = [
  'NO_SIGNAL',
  'RESULT_REPORT',
  'MISSING_TOKEN',
  'MISSING_SIDE',
  'MISSING_LEVELS',
  'NO_STRATEGY_PREFIX',
  'TEXT_TOO_LONG',
] as const;
export const unmatchedReasonSchema = z.enum(unmatchedReasons);
export type UnmatchedReason = z.infer<typeof unmatchedReasonSchema>;

/**
 * The interpretation kept with every signal. `signal`: intents to execute, all of them (a message
 * holding two trades opens both or neither). `skipped`: what was read, not executed, because levels
 * contradict a side. `ruleVersion` names the rules that read it.
 */
export const interpretationSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('signal'), ruleVersion: z.string(), intents: z.array(intentSchema).min(1) }),
  z.object({ kind: z.literal('unmatched'), ruleVersion: z.string(), reason: unmatchedReasonSchema }),
  z.object({
    kind: z.literal('skipped'),
    ruleVersion: z.string(),
    skipReason: z.literal('INVALID_LEVELS'),
    problems: z.array(levelProblemSchema).min(1),
    intents: z.array(intentSchema).min(1),
  }),
]);
export type Interpretation = z.infer<typeof interpretationSchema>;
