// What a follower chooses and the agent terms a pool keeps: apart from the pool's events so that a
// transfer plan (domain/transfer/plan.ts) can carry a follow without importing the event set.
import { z } from 'zod';
import { venueSchema } from '../agent/record.ts';
import { microUsdSchema } from '../shared/money.ts';

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

const settingKeys = [
  'tradeMode',
  'subscriptionType',
  'allocationMode',
  'allocationPercentageMin',
  'allocationPercentageMax',
  'allocationAmountUsd',
  'allocationAmountSol',
  'goLiveUponConfirmation',
  'isPaused',
] as const satisfies ReadonlyArray<keyof FollowSettings>;

export const sameSettings = (a: FollowSettings, b: FollowSettings): boolean => settingKeys.every((k) => a[k] === b[k]);

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

/** A follow as a transfer carries it: the settings and the agent terms it accepted; what opens a pool. */
export const followOpeningSchema = z.object({
  settings: followSettingsSchema,
  terms: agentTermsSchema,
  /**
   * The follow found the pool followed, in this opening (the pool's count of follows): its credit
   * tops that opening up, never a pool stopped or opened anew since. Absent: it found the pool not
   * followed, and its credit opens it (a request's credit that finds it open is rejected). A
   * request whose credit is rejected plans again. Absent on plans recorded before it.
   */
  topsUp: z.number().int().min(1).optional(),
  /** the beta seat claim an opening of a beta agent's pool holds (domain/agent/seats.ts); the pool keeps it while open */
  seatClaim: z.string().min(1).optional(),
});
export type FollowOpening = z.infer<typeof followOpeningSchema>;
