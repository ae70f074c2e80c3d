// Facts of one trade of one follower pool, stream `trade-{tradeId}`. Prices per whole token are
// decimal USD text (domain/shared/price.ts: exact to 10^-18), USD amounts integer micro-USD, sizes
// integer base units of the token written as decimal strings (an 18-decimal token's size passes
// 2^53 at a few USD), percentages basis points. Events stored before prices were finer hold
// integer micro-USD prices under `…Micro` names: `upcastTradeEvent` reads them as they meant.
import { z } from 'zod';
import { priceTextSchema } from '../shared/price.ts';
import { upcastTradeData } from './upcast.ts';

const price = priceTextSchema;
const money = z.number().int();
const bps = z.number().int().min(0).max(10_000);
/** A token size in base units: a non-negative integer as decimal text, read as a bigint. */
export const unitsSchema = z.string().regex(/^(0|[1-9]\d*)$/);

export const sideSchema = z.enum(['long', 'short', 'buy']);
export type Side = z.infer<typeof sideSchema>;

export const entrySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('market') }),
  z.object({ kind: z.literal('zone'), low: price, high: price }),
  z.object({ kind: z.literal('breakout'), direction: z.enum(['above', 'below']), price }),
]);
export type Entry = z.infer<typeof entrySchema>;

/**
 * A take-profit tier as the trade keeps it: `tier` numbers tiers from 1 in the order they were
 * set; `closeBps` is a share of the original filled size; `closesRest` marks the last tier of a
 * list without a runner, which closes whatever remains (no dust left by rounding).
 */
export const targetSchema = z.object({ tier: z.number().int().positive(), price, closeBps: bps, closesRest: z.boolean() });
export type Target = z.infer<typeof targetSchema>;

export const trailingSchema = z.object({ activationBps: bps, callbackBps: bps });

/** Why the stop is where it is; a stop crossed closes with the matching reason. */
export const stopKindSchema = z.enum(['STOP_LOSS', 'BREAKEVEN', 'TRAILING']);
export type StopKind = z.infer<typeof stopKindSchema>;

export const closeReasonSchema = z.enum(['STOP_LOSS', 'TRAILING_STOP', 'BREAKEVEN_STOP', 'TAKE_PROFIT', 'SIGNAL', 'USER', 'AGENT_DELETED']);
export type CloseReason = z.infer<typeof closeReasonSchema>;

export const tradeRequestedSchema = z.object({
  tradeId: z.string().min(1),
  poolId: z.string().min(1),
  token: z.string().min(1),
  decimals: z.number().int().min(0),
  side: sideSchema,
  leverage: z.number().int().positive(),
  notionalMicro: z.number().int().positive(),
  entry: entrySchema,
  stopLoss: price.nullable(),
  targets: z.array(targetSchema),
  trailing: trailingSchema.nullable(),
  /** the tier number after which the stop moves to breakeven */
  breakevenOnTarget: z.number().int().positive().nullable(),
  slippageBps: bps,
  feeBps: bps,
  expiresAt: z.string(),
  at: z.string(),
});

/** The figures of one exit: what left, at which price, the fee paid and the PnL net of all fees. */
const exitFields = {
  tradeId: z.string().min(1),
  price,
  closedUnits: unitsSchema,
  feeMicro: money.min(0),
  /** this exit's PnL, net of its fee and of its share of the entry fee */
  realizedPnlMicro: money,
  remainingUnits: unitsSchema,
  at: z.string(),
};

export const tradeFilledSchema = z.object({
  tradeId: z.string().min(1),
  price,
  sizeUnits: unitsSchema,
  marginMicro: z.number().int().positive(),
  feeMicro: money.min(0),
  at: z.string(),
});
export const tradeClosedSchema = z.object({
  ...exitFields,
  reason: closeReasonSchema,
  /** the tier whose target closed the rest, for TAKE_PROFIT */
  tier: z.number().int().positive().nullable(),
  /** the whole trade's realized PnL: what the pool realizes when it releases the margin */
  totalRealizedPnlMicro: money,
});

/**
 * The trade is over (closed, cancelled or expired): it pays its pool back the margin and the PnL it
 * realized, under transfer `transferId` (domain/transfer). `returnedMicro` = margin + PnL ≥ 0.
 */
export const tradeSettledSchema = z.object({
  tradeId: z.string().min(1),
  poolId: z.string().min(1),
  transferId: z.string().min(1),
  marginMicro: z.number().int().positive(),
  realizedPnlMicro: money,
  returnedMicro: money.min(0),
  at: z.string(),
});

/** The trade's facts: one discriminated union, parsed by projectors, folded by the decider. */
const currentTradeEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('TradeRequested'), data: tradeRequestedSchema }),
  z.object({ type: z.literal('EntryPending'), data: z.object({ tradeId: z.string().min(1), expiresAt: z.string(), at: z.string() }) }),
  z.object({ type: z.literal('TradeFilled'), data: tradeFilledSchema }),
  z.object({ type: z.literal('EntryExpired'), data: z.object({ tradeId: z.string().min(1), at: z.string() }) }),
  z.object({ type: z.literal('EntryCancelled'), data: z.object({ tradeId: z.string().min(1), at: z.string() }) }),
  z.object({ type: z.literal('StopMoved'), data: z.object({ tradeId: z.string().min(1), stop: price, kind: stopKindSchema, at: z.string() }) }),
  /** the favourable move reached the activation: from now on the stop follows the best price */
  z.object({ type: z.literal('TrailingArmed'), data: z.object({ tradeId: z.string().min(1), price, at: z.string() }) }),
  z.object({ type: z.literal('TargetsSet'), data: z.object({ tradeId: z.string().min(1), targets: z.array(targetSchema), at: z.string() }) }),
  z.object({ type: z.literal('TargetHit'), data: z.object({ ...exitFields, tier: z.number().int().positive() }) }),
  /** `requestId`: the request that asked for this partial close (a repeat of it closes nothing more) */
  z.object({ type: z.literal('TradeReduced'), data: z.object({ ...exitFields, reason: closeReasonSchema, requestId: z.string().optional() }) }),
  z.object({ type: z.literal('TradeClosed'), data: tradeClosedSchema }),
  z.object({ type: z.literal('TradeMarked'), data: z.object({ tradeId: z.string().min(1), price, unrealizedPnlMicro: money, at: z.string() }) }),
  z.object({ type: z.literal('TradeSettled'), data: tradeSettledSchema }),
  /** the trade never opened: its request was refused when the pool's margin arrived (the margin goes back) */
  z.object({ type: z.literal('TradeRejected'), data: z.object({ tradeId: z.string().min(1), reason: z.string(), message: z.string(), at: z.string() }) }),
]);
export type TradeEvent = z.infer<typeof currentTradeEventSchema>;

/** A stored trade event, old or new, as it means today. Pure; a current event comes back as it is. */
export const upcastTradeEvent = <E extends { type: string; data: unknown }>(event: E): E => {
  const data = upcastTradeData(event.type, event.data);
  return data === event.data ? event : { ...event, data };
};

const isEvent = (raw: unknown): raw is { type: string; data: unknown } => raw !== null && typeof raw === 'object' && 'type' in raw;

/** Parses a stored trade event, upcasting an old one first. */
export const tradeEventSchema = z.preprocess((raw) => (isEvent(raw) ? upcastTradeEvent(raw) : raw), currentTradeEventSchema);
export const tradeEventTypes: ReadonlySet<string> = new Set(currentTradeEventSchema.options.map((o) => o.shape.type.value));
export type TradeEventOf<T extends TradeEvent['type']> = Extract<TradeEvent, { type: T }>;
