// Facts of the pool stream `pool-{userId}.{agentId}.{walletContext}`: one subscription and its
// allocation ledger. Money is integer micro-USD, SOL amounts integer lamports; times are ISO strings.
import { z } from 'zod';
import { sideSchema } from '../trade/events.ts';
import { transferPlanSchema } from '../transfer/plan.ts';
import { walletContextSchema } from '../wallet/context.ts';
import { skipReasonSchema } from './skip-reasons.ts';
import { agentTermsSchema, followSettingsSchema, walletModeSchema, type WalletMode } from './settings.ts';

export * from './settings.ts';
export const agentFollowedSchema = followSettingsSchema.extend({
  poolId: z.string(),
  agentId: z.string(),
  userId: z.string(),
  walletContext: walletContextSchema,
  walletMode: walletModeSchema,
  terms: agentTermsSchema,
  subscribedAt: z.string(),
  /** the beta seat claim this opening holds (a beta agent's pool; absent before seats were held by claims) */
  seatClaim: z.string().min(1).optional(),
});
export type AgentFollowed = z.infer<typeof agentFollowedSchema>;

export const followSettingsUpdatedSchema = followSettingsSchema.extend({ updatedAt: z.string() });
export type FollowSettingsUpdated = z.infer<typeof followSettingsUpdatedSchema>;

/** Capital credited to the pool: the credit of transfer `transferId`, for the amount its source recorded. */
export const allocationAddedSchema = z.object({
  transferId: z.string().min(1),
  amountMicro: z.number().int().positive(),
  confirmed: z.literal(true),
  /** absent on older events (the projector then uses the event's time) */
  at: z.string().optional(),
});
export type AllocationAdded = z.infer<typeof allocationAddedSchema>;

/**
 * The pool refused the credit of a transfer (e.g. it cannot open without the follow's settings).
 * Recorded, so that the refusal is final: a later credit of the same transfer is refused too, and
 * the source may safely give the money back.
 */
export const transferRejectedSchema = z.object({ transferId: z.string().min(1), reason: z.string() });
export type TransferRejected = z.infer<typeof transferRejectedSchema>;

export const bridgeStatusSchema = z.enum(['PENDING_BRIDGE', 'BRIDGING', 'CONFIRMED', 'FAILED', 'RECLAIM_DEFERRED']);
export type BridgeStatus = z.infer<typeof bridgeStatusSchema>;

/**
 * Real context: capital on its way into the pool (the wallet paid it; the venue has not confirmed
 * it yet). It counts in pendingDeltaUsd, never in allocatedUsd, until AllocationSettled.
 */
export const allocationPendingSchema = z.object({
  transferId: z.string().min(1),
  amountMicro: z.number().int().positive(),
  at: z.string(),
});

/**
 * The pool pays out (withdraw, stop following): the debit of transfer `transfer`, carrying the
 * whole plan so the recovery can finish it from this event alone. `pending` (real context): the
 * amount is reserved (pendingOut) until the venue confirms; otherwise it leaves at once.
 */
export const withdrawalRequestedSchema = z.object({
  transfer: transferPlanSchema,
  pending: z.boolean(),
  at: z.string(),
});

/** The venue's answer for a pending add or withdrawal: confirmed for `amountMicro` (a reclaim may be less than asked), or failed. */
export const allocationSettledSchema = z.object({
  transferId: z.string().min(1),
  /** the leg settled: `in` an add, `out` a withdrawal */
  direction: z.enum(['in', 'out']),
  outcome: z.enum(['confirmed', 'failed']),
  /** confirmed: what moved (≤ what was pending); failed: 0 */
  amountMicro: z.number().int().min(0),
  reason: z.string().optional(),
  at: z.string(),
});

/** Where a real perp pool's bridge transfer stands (docs/domain-rules.md, Bridge lifecycle). */
export const bridgeStatusChangedSchema = z.object({
  transferId: z.string().min(1),
  status: bridgeStatusSchema,
  bridgeTransactionId: z.string().nullable(),
  at: z.string(),
});

/**
 * A trade of the agent opened in this pool: its margin, as the pool decided it, is locked until it
 * closes. Token, side and signal: what a follow-up finds it by; `transfer`: the plan paying the
 * trade its margin, for the margin the pool decided. All four are absent on events recorded before
 * signals opened trades.
 */
export const tradeOpenedSchema = z.object({
  tradeId: z.string().min(1),
  marginMicro: z.number().int().positive(),
  at: z.string(),
  token: z.string().min(1).optional(),
  side: sideSchema.optional(),
  signalId: z.string().min(1).nullable().optional(),
  transfer: transferPlanSchema.optional(),
});
/**
 * The pool did not open a trade (docs/domain-rules.md's skip reasons, Agent trades and signals). Recorded, so that the refusal is final:
 * the same trade id asked again changes nothing. Moves no money.
 */
export const tradeRefusedSchema = z.object({ tradeId: z.string().min(1), reason: skipReasonSchema, message: z.string(), at: z.string() });
/**
 * A test-trading pool's paper execution of a trade (docs/decisions.md, "Trade modes and going
 * live"): what would have opened, with the margin the pool's limits gave it, beside the pool's real
 * capital. Nothing is locked, no trade stream exists; final for its trade id, as a refusal is.
 */
export const tradeSimulatedSchema = z.object({
  tradeId: z.string().min(1),
  marginMicro: z.number().int().positive(),
  token: z.string().min(1),
  side: sideSchema,
  signalId: z.string().min(1).nullable(),
  at: z.string(),
});
/** The open trade's mark-to-market PnL now (replaces the previous mark). */
export const tradeMarkedSchema = z.object({ tradeId: z.string().min(1), unrealizedPnlMicro: z.number().int(), at: z.string() });
/**
 * The trade closed: its margin is released and its PnL (net of venue fees) realized. `transferId`:
 * the transfer that paid it back; `released`: it never opened at its destination, the margin came
 * back whole (PnL 0).
 */
export const tradeClosedSchema = z.object({
  tradeId: z.string().min(1),
  realizedPnlMicro: z.number().int(),
  at: z.string(),
  transferId: z.string().min(1).optional(),
  released: z.literal(true).optional(),
});

/**
 * Success fees moved out of the pool to the agent's creator and the platform, with the figures
 * they were computed from: fee = successFeePercent% × (realized + min(0, unrealized)) − feesChargedBefore,
 * or less when less is free (the rest of what is due stays pending for the next settlement).
 */
export const feesSettledSchema = z.object({
  settlementId: z.string().min(1),
  feeMicro: z.number().int().positive(),
  platformMicro: z.number().int().min(0),
  creatorMicro: z.number().int().min(0),
  realizedMicro: z.number().int(),
  unrealizedMicro: z.number().int(),
  feesChargedBeforeMicro: z.number().int().min(0),
  successFeePercent: z.number().min(0).max(100),
  at: z.string(),
});

/**
 * The user stopped following: the pool leaves the list (its history stays); a later follow opens it
 * anew. `transferId`: the stop's transfer, so that a repeated step finds it decided even when the
 * pool had nothing to pay out (absent on events written before it was recorded).
 */
export const poolClosedSchema = z.object({ at: z.string(), transferId: z.string().min(1).optional() });

/**
 * The pool was configured with `goLiveUponConfirmation: false`: it is followed and holds its
 * capital, but the agent's signals are skipped (AWAITING_GO_LIVE) until it goes live. Recorded
 * with the opening it defers; a pool opened without it is live.
 */
export const goLiveDeferredSchema = z.object({ at: z.string() });
/** The user went live (a follow with `goLiveUponConfirmation: true`): the agent's signals trade in the pool from now on. */
export const poolWentLiveSchema = z.object({ at: z.string() });

/** The reconciliation worker's reading of the venue for this pool (real context). */
export const reconciliationObservedSchema = z.object({
  status: z.enum(['IN_SYNC', 'GAP', 'UNKNOWN']),
  venueEquityMicro: z.number().int().nullable(),
  venueFreeMarginMicro: z.number().int().nullable(),
  /** venue − ledger */
  gapMicro: z.number().int().nullable(),
  at: z.string(),
});

/** The pool stream's facts: one discriminated union, parsed by projectors, folded by the decider. */
export const poolEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('AgentFollowed'), data: agentFollowedSchema }),
  z.object({ type: z.literal('FollowSettingsUpdated'), data: followSettingsUpdatedSchema }),
  z.object({ type: z.literal('AllocationAdded'), data: allocationAddedSchema }),
  z.object({ type: z.literal('TransferRejected'), data: transferRejectedSchema }),
  z.object({ type: z.literal('AllocationPending'), data: allocationPendingSchema }),
  z.object({ type: z.literal('WithdrawalRequested'), data: withdrawalRequestedSchema }),
  z.object({ type: z.literal('AllocationSettled'), data: allocationSettledSchema }),
  z.object({ type: z.literal('BridgeStatusChanged'), data: bridgeStatusChangedSchema }),
  z.object({ type: z.literal('TradeOpened'), data: tradeOpenedSchema }),
  z.object({ type: z.literal('TradeRefused'), data: tradeRefusedSchema }),
  z.object({ type: z.literal('TradeSimulated'), data: tradeSimulatedSchema }),
  z.object({ type: z.literal('TradeMarked'), data: tradeMarkedSchema }),
  z.object({ type: z.literal('TradeClosed'), data: tradeClosedSchema }),
  z.object({ type: z.literal('FeesSettled'), data: feesSettledSchema }),
  z.object({ type: z.literal('PoolClosed'), data: poolClosedSchema }),
  z.object({ type: z.literal('ReconciliationObserved'), data: reconciliationObservedSchema }),
  z.object({ type: z.literal('GoLiveDeferred'), data: goLiveDeferredSchema }),
  z.object({ type: z.literal('PoolWentLive'), data: poolWentLiveSchema }),
]);
export type PoolEvent = z.infer<typeof poolEventSchema>;
export type PoolEventOf<T extends PoolEvent['type']> = Extract<PoolEvent, { type: T }>;
export const poolEventTypes: ReadonlySet<string> = new Set(poolEventSchema.options.map((o) => o.shape.type.value));

export const walletModeOf = (context: z.infer<typeof walletContextSchema>): WalletMode => (context === 'virtual' ? 'VIRTUAL' : 'REAL');

/** When an event happened, if it says. */
export function timeOf(event: PoolEvent): string | undefined {
  switch (event.type) {
    case 'AgentFollowed':
      return event.data.subscribedAt;
    case 'FollowSettingsUpdated':
      return event.data.updatedAt;
    case 'TransferRejected':
      return undefined;
    default:
      return event.data.at;
  }
}
