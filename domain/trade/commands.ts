// The trade's commands. Their data is parsed here (a malformed field is VALIDATION_FAILED), so the
// decider only ever reasons about well-formed numbers.
import { z } from 'zod';
import type { Command } from '../shared/decider.ts';
import { refuse } from '../shared/errors.ts';
import { MAX_PRICE, MIN_PRICE, priceTextSchema, storedPrice } from '../shared/price.ts';
import { entrySchema, sideSchema, type Entry } from './events.ts';
import { upcastTradeRequest } from './upcast.ts';

/** A price in attodollars per whole token (domain/shared/price.ts). */
const price = z.bigint().min(MIN_PRICE).max(MAX_PRICE);
const percent = z.number().gt(0).max(100);

/** How the trade enters, its prices as bigints (the event keeps them as text). */
export const entryInputSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('market') }),
  z.object({ kind: z.literal('zone'), low: price, high: price }),
  z.object({ kind: z.literal('breakout'), direction: z.enum(['above', 'below']), price }),
]);
export type PriceEntry = z.infer<typeof entryInputSchema>;

export const takeProfitSchema = z.object({ price, closePercent: percent.optional() });
export type TakeProfit = z.infer<typeof takeProfitSchema>;

export const requestTradeDataSchema = z.object({
  tradeId: z.string().min(1),
  poolId: z.string().min(1),
  token: z.string().min(1),
  decimals: z.number().int().min(0).max(36),
  side: sideSchema,
  leverage: z.number().int().min(1).max(1000),
  /** USD size at entry; at most 1e9 USD */
  notionalMicro: z.number().int().positive().max(1e15),
  entry: entryInputSchema,
  stopLoss: price.optional(),
  takeProfits: z.array(takeProfitSchema).max(20),
  trailing: z.object({ activationPercent: percent, callbackPercent: percent }).optional(),
  breakevenOnTarget: z.number().int().positive().optional(),
  slippageBps: z.number().int().min(0).max(5_000),
  /** the venue's taker fee; below 10% so that breakeven stays finite */
  feeBps: z.number().int().min(0).max(1_000),
  expiresAt: z.iso.datetime({ offset: true }),
  markPrice: price,
});
/**
 * The trade a signal asks for, as a transfer plan carries it to the trade (JSON, in events): the
 * request without its ids, notional and mark, prices as decimal USD text. Old plans are upcast.
 */
export const storedTradeRequestSchema = z.preprocess(
  upcastTradeRequest,
  requestTradeDataSchema.omit({ tradeId: true, poolId: true, notionalMicro: true, markPrice: true, entry: true, stopLoss: true, takeProfits: true }).extend({
    entry: entrySchema,
    stopLoss: priceTextSchema.optional(),
    takeProfits: z.array(z.object({ price: priceTextSchema, closePercent: percent.optional() })).max(20),
  }),
);
export type StoredTradeRequest = z.infer<typeof storedTradeRequestSchema>;

/** An event's entry (prices as text) with bigint prices. */
export const priceEntryOf = (entry: Entry): PriceEntry => {
  if (entry.kind === 'zone') return { kind: 'zone', low: storedPrice(entry.low), high: storedPrice(entry.high) };
  if (entry.kind === 'breakout') return { kind: 'breakout', direction: entry.direction, price: storedPrice(entry.price) };
  return entry;
};

type RequestOfStored = Omit<z.infer<typeof requestTradeDataSchema>, 'tradeId' | 'poolId' | 'notionalMicro' | 'markPrice'>;

/** A stored request (old or new) as RequestTrade's data, its prices bigints again. */
export const requestOfStored = (raw: unknown): RequestOfStored => requestOf(parsed(storedTradeRequestSchema, raw));

/**
 * A request its schema read already (a plan parsed from its event, or decided by the pool on a parsed
 * command) as RequestTrade's data: the conversion alone, since RequestTrade parses its data again.
 */
export function requestOf(stored: StoredTradeRequest): RequestOfStored {
  const { entry, stopLoss, takeProfits, ...rest } = stored;
  return {
    ...rest,
    entry: priceEntryOf(entry),
    ...(stopLoss !== undefined ? { stopLoss: storedPrice(stopLoss) } : {}),
    takeProfits: takeProfits.map((tp) => ({ ...tp, price: storedPrice(tp.price) })),
  };
}

export const markPriceDataSchema = z.object({ price });
export const moveStopDataSchema = z.union([z.object({ to: z.literal('breakeven') }), z.object({ price })]);
export const setTargetsDataSchema = z.object({ takeProfits: z.array(takeProfitSchema).max(20) });
export const cancelEntryDataSchema = z.object({});
export const rejectTradeDataSchema = z.object({ tradeId: z.string().min(1), reason: z.string().min(1).max(100), message: z.string().max(1000) });
export const closePositionDataSchema = z.object({
  /** a percent of the original filled size, capped at what remains */
  closePercent: percent,
  price,
  /** who asked (a signal's follow-up): a partial close asked again by the same requester closes nothing more */
  requestId: z.string().min(1).max(300).optional(),
  reason: z.enum(['SIGNAL', 'USER', 'AGENT_DELETED']),
});

export type RequestTrade = Command<'RequestTrade', z.infer<typeof requestTradeDataSchema>>;
/** The price watcher's tick. */
export type MarkPrice = Command<'MarkPrice', z.infer<typeof markPriceDataSchema>>;
export type MoveStop = Command<'MoveStop', z.infer<typeof moveStopDataSchema>>;
/** Replaces the targets not hit yet. */
export type SetTargets = Command<'SetTargets', z.infer<typeof setTargetsDataSchema>>;
export type CancelEntry = Command<'CancelEntry', z.infer<typeof cancelEntryDataSchema>>;
/** A reduce-only market exit. */
export type ClosePosition = Command<'ClosePosition', z.infer<typeof closePositionDataSchema>>;

/** The request cannot open (its credit is refused): recorded so that a later request of the id changes nothing. */
export type RejectTrade = Command<'RejectTrade', z.infer<typeof rejectTradeDataSchema>>;

export type TradeCommand = RequestTrade | RejectTrade | MarkPrice | MoveStop | SetTargets | CancelEntry | ClosePosition;

/** The command's data as its schema reads it, or VALIDATION_FAILED naming the fields. */
export function parsed<T>(schema: z.ZodType<T>, data: unknown): T {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const fields = result.error.issues.map((i) => `${i.path.join('.') || 'data'}: ${i.message}`).join('; ');
  throw refuse('VALIDATION_FAILED', fields);
}
