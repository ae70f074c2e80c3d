// Facts of the pool stream `pool-{userId}.{agentId}.{walletContext}`: one subscription and its
// allocation ledger. Money is integer micro-USD, SOL amounts integer lamports; times are ISO strings.
import { z } from 'zod';
import { venueSchema } from '../agent/record.ts';
import { microUsdSchema } from '../shared/money.ts';
import { walletContextSchema } from '../wallet/context.ts';

export const tradeModes = ['AUTO_TRADING', 'ALERTS_ONLY', 'TEST_TRADING', 'FULL_TRADING'] as const;
export const tradeModeSchema = z.enum(tradeModes);
export type TradeMode = z.infer<typeof tradeModeSchema>;

export const allocationModes = ['PERCENTAGE_RANGE', 'USD_AMOUNT', 'SOL_AMOUNT'] as const;
export const allocationModeSchema = z.enum(allocationModes);
export type AllocationMode = z.infer<typeof allocationModeSchema>;

export const walletModeSchema = z.enum(['VIRTUAL', 'REAL']);
export type WalletMode = z.infer<typeof walletModeSchema>;

const percent = z.number().min(0).max(100);

/** How much capital the follower wants in the pool; only the fields of its mode are set. */
export const allocationSettingsSchema = z.object({
  allocationMode: allocationModeSchema,
  allocationPercentageMin: percent.nullable(),
  allocationPercentageMax: percent.nullable(),
  /** micro-USD */
  allocationAmountUsd: microUsdSchema.nullable(),
  /** lamports (10^-9 SOL) */
  allocationAmountSol: z.number().int().min(0).nullable(),
});
export type AllocationSettings = z.infer<typeof allocationSettingsSchema>;

/** The follower's choices; `subscriptionType` and `walletMode` are the spec's deprecated aliases, kept in step. */
export const followSettingsSchema = allocationSettingsSchema.extend({
  tradeMode: tradeModeSchema,
  subscriptionType: tradeModeSchema,
  goLiveUponConfirmation: z.boolean(),
  isPaused: z.boolean(),
});
export type FollowSettings = z.infer<typeof followSettingsSchema>;

/** The agent's terms when the user followed: later edits by its developer do not change them. */
export const agentTermsSchema = z.object({
  agentName: z.string(),
  agentImageUrl: z.string().nullable(),
  venue: venueSchema,
  /** 1 on the spot venue */
  maxLeverage: z.number().min(1),
  successFeePercent: z.number().min(0).max(100),
  minAllocationUsd: microUsdSchema,
  minTradeUsd: microUsdSchema,
  minPerTradePercent: z.number(),
  recommendedPerTradePercent: z.number(),
  maxConcurrentPositions: z.number().int(),
  maxEntriesPerTrade: z.number().int(),
});
export type AgentTerms = z.infer<typeof agentTermsSchema>;

/** What opens a pool: the first follow's settings and the agent terms it accepted. */
export const followOpeningSchema = z.object({
  settings: followSettingsSchema,
  terms: agentTermsSchema,
});
export type FollowOpening = z.infer<typeof followOpeningSchema>;

export const agentFollowedSchema = followSettingsSchema.extend({
  poolId: z.string(),
  agentId: z.string(),
  userId: z.string(),
  walletContext: walletContextSchema,
  walletMode: walletModeSchema,
  terms: agentTermsSchema,
  subscribedAt: z.string(),
});
export type AgentFollowed = z.infer<typeof agentFollowedSchema>;

export const followSettingsUpdatedSchema = followSettingsSchema.extend({ updatedAt: z.string() });
export type FollowSettingsUpdated = z.infer<typeof followSettingsUpdatedSchema>;

/** Capital credited to the pool: the credit of transfer `transferId`, for the amount its source recorded. */
export const allocationAddedSchema = z.object({
  transferId: z.string().min(1),
  amountMicro: z.number().int().positive(),
  confirmed: z.literal(true),
});
export type AllocationAdded = z.infer<typeof allocationAddedSchema>;

/**
 * The pool refused the credit of a transfer (e.g. it cannot open without the follow's settings).
 * Recorded, so that the refusal is final: a later credit of the same transfer is refused too, and
 * the source may safely give the money back.
 */
export const transferRejectedSchema = z.object({ transferId: z.string().min(1), reason: z.string() });
export type TransferRejected = z.infer<typeof transferRejectedSchema>;

/** The pool stream's facts: one discriminated union, parsed by projectors, folded by the decider. */
export const poolEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('AgentFollowed'), data: agentFollowedSchema }),
  z.object({ type: z.literal('FollowSettingsUpdated'), data: followSettingsUpdatedSchema }),
  z.object({ type: z.literal('AllocationAdded'), data: allocationAddedSchema }),
  z.object({ type: z.literal('TransferRejected'), data: transferRejectedSchema }),
]);
export type PoolEvent = z.infer<typeof poolEventSchema>;
export const poolEventTypes: ReadonlySet<string> = new Set(poolEventSchema.options.map((o) => o.shape.type.value));

export const walletModeOf = (context: z.infer<typeof walletContextSchema>): WalletMode =>
  context === 'virtual' ? 'VIRTUAL' : 'REAL';
