// The spec's "Agent subscription record" and its allocationBalanceAudit, built from a read-model
// row: the row holds inputs, the figures come from domain/pool/ledger.ts.
import { z } from 'zod';
import { allocationModeSchema, tradeModeSchema, walletModeOf, walletModeSchema } from '../../domain/pool/events.ts';
import { poolFigures, type LedgerInputs, type ReconciliationStatus } from '../../domain/pool/ledger.ts';
import type { Venue } from '../../domain/agent/record.ts';
import { LAMPORTS_PER_SOL, microToUsd } from '../../domain/shared/money.ts';
import { walletContextSchema, type WalletContext } from '../../domain/wallet/events.ts';

const usd = z.number();
export const bridgeStatusSchema = z.enum(['PENDING_BRIDGE', 'BRIDGING', 'CONFIRMED', 'FAILED', 'RECLAIM_DEFERRED']);
const reconciliationStatusSchema = z.enum(['IN_SYNC', 'GAP', 'UNKNOWN']);

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
  pendingDeltaUsd: usd,
  minAllocationUsd: usd,
  minTradeUsd: usd,
  minPerTradePercent: z.number(),
  recommendedPerTradePercent: z.number(),
  maxConcurrentPositions: z.number(),
  maxEntriesPerTrade: z.number(),
  allocationBalanceAudit: allocationBalanceAuditSchema,
  goLiveUponConfirmation: z.boolean(),
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

/** A row of the `subscriptions` table as pg returns it (bigint columns are strings). */
export interface SubscriptionRow {
  user_id: string;
  agent_id: string;
  wallet_context: WalletContext;
  agent_name: string;
  agent_image_url: string | null;
  venue: Venue;
  max_leverage: number;
  success_fee_percent: number;
  min_allocation_micro: string;
  min_trade_micro: string;
  min_per_trade_percent: number;
  recommended_per_trade_percent: number;
  max_concurrent_positions: number;
  max_entries_per_trade: number;
  trade_mode: SubscriptionRecord['tradeMode'];
  allocation_mode: SubscriptionRecord['allocationMode'];
  allocation_percentage_min: number | null;
  allocation_percentage_max: number | null;
  allocation_amount_usd_micro: string | null;
  allocation_amount_sol_lamports: string | null;
  go_live_upon_confirmation: boolean;
  is_paused: boolean;
  confirmed_in_micro: string;
  confirmed_out_micro: string;
  realized_micro: string;
  unrealized_micro: string;
  locked_micro: string;
  pending_in_micro: string;
  pending_out_micro: string;
  fees_charged_micro: string;
  bridge_status: SubscriptionRecord['bridgeStatus'];
  bridge_transaction_id: string | null;
  reconciliation_status: ReconciliationStatus | null;
  subscribed_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** lamports → whole SOL as a number, through a decimal string (no float arithmetic). */
function lamportsToSol(lamports: string): number {
  const big = BigInt(lamports);
  return Number(`${big / LAMPORTS_PER_SOL}.${(big % LAMPORTS_PER_SOL).toString().padStart(9, '0')}`);
}

/** The ledger inputs a row holds (bigint columns are strings). */
export const ledgerOf = (r: SubscriptionRow): LedgerInputs => ({
  confirmedIn: Number(r.confirmed_in_micro),
  confirmedOut: Number(r.confirmed_out_micro),
  realized: Number(r.realized_micro),
  unrealized: Number(r.unrealized_micro),
  locked: Number(r.locked_micro),
  pendingIn: Number(r.pending_in_micro),
  pendingOut: Number(r.pending_out_micro),
  feesCharged: Number(r.fees_charged_micro),
});

/** Only the fields of the row's allocation mode are set; the others are left out. */
function allocationFields(r: SubscriptionRow) {
  return {
    ...(r.allocation_percentage_min !== null ? { allocationPercentageMin: r.allocation_percentage_min } : {}),
    ...(r.allocation_percentage_max !== null ? { allocationPercentageMax: r.allocation_percentage_max } : {}),
    ...(r.allocation_amount_usd_micro !== null ? { allocationAmountUsd: microToUsd(Number(r.allocation_amount_usd_micro)) } : {}),
    ...(r.allocation_amount_sol_lamports !== null ? { allocationAmountSol: lamportsToSol(r.allocation_amount_sol_lamports) } : {}),
  };
}

function audit(f: ReturnType<typeof poolFigures>): SubscriptionRecord['allocationBalanceAudit'] {
  const u = microToUsd;
  return {
    depositedUsd: u(f.depositedUsd),
    realizedPnlUsd: u(f.realizedPnlUsd),
    unrealizedPnlUsd: u(f.unrealizedPnlUsd),
    lockedMarginUsd: u(f.lockedMarginUsd),
    feeBufferUsd: u(f.feeBufferUsd),
    ledgerAvailableUsd: u(f.ledgerAvailableUsd),
    dustUsd: u(f.dustUsd),
    pendingDeltaUsd: u(f.pendingDeltaUsd),
    reconciliationStatus: f.reconciliationStatus,
    netRealizedProfitUsd: u(f.netRealizedProfitUsd),
    pendingPlatformFeeUsd: u(f.pendingPlatformFeeUsd),
    pendingCreatorFeeUsd: u(f.pendingCreatorFeeUsd),
    estimatedSuccessFeeUsd: u(f.estimatedSuccessFeeUsd),
    estimatedPlatformFeeUsd: u(f.estimatedPlatformFeeUsd),
    estimatedCreatorFeeUsd: u(f.estimatedCreatorFeeUsd),
    netUserPayoutUsd: u(f.netUserPayoutUsd),
  };
}

export function subscriptionRecord(r: SubscriptionRow): SubscriptionRecord {
  const f = poolFigures(ledgerOf(r), {
    walletContext: r.wallet_context,
    venue: r.venue,
    maxLeverage: r.max_leverage,
    successFeePercent: r.success_fee_percent,
    reconciliationStatus: r.reconciliation_status,
  });
  const u = microToUsd;
  return {
    agent: r.agent_id,
    agentName: r.agent_name,
    agentImageUrl: r.agent_image_url,
    subscribedAt: r.subscribed_at.toISOString(),
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    subscriptionType: r.trade_mode,
    tradeMode: r.trade_mode,
    walletContext: r.wallet_context,
    walletMode: walletModeOf(r.wallet_context),
    allocationMode: r.allocation_mode,
    ...allocationFields(r),
    allocatedUsd: u(f.allocatedUsd),
    inUseUsd: u(f.inUseUsd),
    withdrawableUsd: u(f.withdrawableUsd),
    currentBalanceUsd: u(f.currentBalanceUsd),
    availableUsd: u(f.availableUsd),
    inTradesUsd: u(f.inTradesUsd),
    feeBufferUsd: u(f.feeBufferUsd),
    lockedInPositionsUsd: u(f.lockedInPositionsUsd),
    venue: r.venue,
    // Live figures of the shared perp-venue account: null for spot and virtual pools, and until a
    // real venue adapter reports them for real perp pools.
    perpVenueTotalEquityUsd: null,
    perpVenueFreeMarginUsd: null,
    bridgeStatus: r.wallet_context === 'real' && r.venue === 'PERP_VENUE' ? r.bridge_status : null,
    bridgeTransactionId: r.bridge_transaction_id,
    pendingDeltaUsd: u(f.pendingDeltaUsd),
    minAllocationUsd: u(BigInt(r.min_allocation_micro)),
    minTradeUsd: u(BigInt(r.min_trade_micro)),
    minPerTradePercent: r.min_per_trade_percent,
    recommendedPerTradePercent: r.recommended_per_trade_percent,
    maxConcurrentPositions: r.max_concurrent_positions,
    maxEntriesPerTrade: r.max_entries_per_trade,
    allocationBalanceAudit: audit(f),
    goLiveUponConfirmation: r.go_live_upon_confirmation,
    isPaused: r.is_paused,
  };
}
