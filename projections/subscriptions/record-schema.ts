// The spec's "Agent subscription record" and "Subscription action result" as zod schemas: the
// response schemas of the routes, and the parse that renders a record (record.ts).
import { z } from 'zod';
import { allocationModeSchema, bridgeStatusSchema, tradeModeSchema, walletModeSchema } from '../../domain/pool/events.ts';
import { walletContextSchema } from '../../domain/wallet/events.ts';

const usd = z.number();
const reconciliationStatusSchema = z.enum(['IN_SYNC', 'GAP', 'UNKNOWN']);

/** Not in the spec's record: an addition a client that does not know it can ignore (docs/decisions.md). */
export const lastFailedTransferSchema = z
  .object({
    transferId: z.string(),
    direction: z.enum(['add', 'withdrawal']),
    /** what did not move: an add went back to the wallet, a withdrawal stayed in the pool */
    amountUsd: usd,
    /** the venue's reason, e.g. INSUFFICIENT_FUNDS */
    reason: z.string(),
    failedAt: z.string(),
  })
  .describe('the last add or withdrawal the venue failed, and why; absent when none failed since the last one it confirmed');

export const allocationBalanceAuditSchema = z.object({
  depositedUsd: usd,
  realizedPnlUsd: usd,
  unrealizedPnlUsd: usd,
  lockedMarginUsd: usd,
  feeBufferUsd: usd,
  ledgerAvailableUsd: usd,
  dustUsd: usd,
  pendingDeltaUsd: usd,
  reconciliationStatus: reconciliationStatusSchema,
  netRealizedProfitUsd: usd,
  pendingPlatformFeeUsd: usd,
  pendingCreatorFeeUsd: usd,
  estimatedSuccessFeeUsd: usd,
  estimatedPlatformFeeUsd: usd,
  estimatedCreatorFeeUsd: usd,
  netUserPayoutUsd: usd,
  venueEquityUsd: usd.optional(),
  venueFreeMarginUsd: usd.optional(),
  venueGapUsd: usd.optional(),
  bridgeStatus: bridgeStatusSchema.optional(),
});

export const subscriptionRecordSchema = z.object({
  agent: z.string(),
  agentName: z.string(),
  agentImageUrl: z.string().nullable(),
  subscribedAt: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  subscriptionType: tradeModeSchema,
  tradeMode: tradeModeSchema,
  walletContext: walletContextSchema,
  walletMode: walletModeSchema,
  allocationMode: allocationModeSchema,
  allocationPercentageMin: z.number().optional(),
  allocationPercentageMax: z.number().optional(),
  allocationAmountUsd: usd.optional(),
  allocationAmountSol: z.number().optional(),
  allocatedUsd: usd,
  inUseUsd: usd,
  withdrawableUsd: usd,
  currentBalanceUsd: usd,
  availableUsd: usd,
  inTradesUsd: usd,
  feeBufferUsd: usd,
  lockedInPositionsUsd: usd,
  venue: z.enum(['SPOT_VENUE', 'PERP_VENUE', 'AGGREGATOR_VENUE', 'ALL_PLATFORMS']),
  perpVenueTotalEquityUsd: usd.nullable(),
  perpVenueFreeMarginUsd: usd.nullable(),
  bridgeStatus: bridgeStatusSchema.nullable(),
  bridgeTransactionId: z.string().nullable(),
  lastFailedTransfer: lastFailedTransferSchema.optional(),
  pendingDeltaUsd: usd,
  minAllocationUsd: usd,
  minTradeUsd: usd,
  minPerTradePercent: z.number(),
  recommendedPerTradePercent: z.number(),
  maxConcurrentPositions: z.number(),
  maxEntriesPerTrade: z.number(),
  allocationBalanceAudit: allocationBalanceAuditSchema,
  goLiveUponConfirmation: z.boolean(),
  /** Not in the spec's record (docs/decisions.md, "Trade modes and going live"): an addition a client that does not know it can ignore. */
  isLive: z
    .boolean()
    .describe("whether the agent's signals trade in this pool: false while a pool followed with goLiveUponConfirmation false waits for its go-live"),
  isPaused: z.boolean(),
});
export type SubscriptionRecord = z.infer<typeof subscriptionRecordSchema>;

/** Spec: "Subscription action result" (the answer of follow, and later of withdraw). */
export const subscriptionActionResultSchema = z.object({
  success: z.boolean(),
  message: z.string(),
  subscription: subscriptionRecordSchema.optional(),
  agentName: z.string().optional(),
  agentImageUrl: z.string().optional(),
  strategyCount: z.number().optional(),
});
