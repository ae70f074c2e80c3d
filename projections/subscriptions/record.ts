// The spec's "Agent subscription record" and its allocationBalanceAudit, built from a read-model
// row: the row holds inputs, the figures come from domain/pool/ledger.ts.
import { z } from 'zod';
import { allocationModeSchema, bridgeStatusSchema, tradeModeSchema, walletModeOf, walletModeSchema, type AgentTerms, type BridgeStatus, type FollowSettings } from '../../domain/pool/events.ts';
import { poolFigures, type LedgerInputs, type ReconciliationStatus } from '../../domain/pool/ledger.ts';
import type { FollowedPool, Reconciliation } from '../../domain/pool/state.ts';
import type { Venue } from '../../domain/agent/record.ts';
import { LAMPORTS_PER_SOL, microToUsd, type MicroUsd } from '../../domain/shared/money.ts';
import { walletContextSchema, type WalletContext } from '../../domain/wallet/events.ts';

const usd = z.number();
export { bridgeStatusSchema };
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
  /** the last venue observation (absent from rows of the conventional baseline) */
  venue_equity_micro?: string | null;
  venue_free_margin_micro?: string | null;
  venue_gap_micro?: string | null;
  subscribed_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** lamports → whole SOL as a number, through a decimal string (no float arithmetic). */
function lamportsToSol(lamports: number): number {
  const big = BigInt(lamports);
  return Number(`${big / LAMPORTS_PER_SOL}.${(big % LAMPORTS_PER_SOL).toString().padStart(9, '0')}`);
}

/**
 * What a subscription record is made of, whether it comes from a read-model row (queries) or from
 * the pool's state (a command's answer): one record function for both, so they cannot differ.
 */
export interface PoolView {
  agentId: string;
  walletContext: WalletContext;
  terms: AgentTerms;
  settings: FollowSettings;
  ledger: LedgerInputs;
  bridge: { status: BridgeStatus; transactionId: string | null } | null;
  reconciliation: Reconciliation | null;
  subscribedAt: string;
  updatedAt: string;
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

const numberOrNull = (v: string | null | undefined): MicroUsd | null => (v === null || v === undefined ? null : Number(v));

export function viewOfRow(r: SubscriptionRow): PoolView {
  return {
    agentId: r.agent_id,
    walletContext: r.wallet_context,
    terms: {
      agentName: r.agent_name,
      agentImageUrl: r.agent_image_url,
      venue: r.venue,
      maxLeverage: r.max_leverage,
      successFeePercent: r.success_fee_percent,
      minAllocationUsd: Number(r.min_allocation_micro),
      minTradeUsd: Number(r.min_trade_micro),
      minPerTradePercent: r.min_per_trade_percent,
      recommendedPerTradePercent: r.recommended_per_trade_percent,
      maxConcurrentPositions: r.max_concurrent_positions,
      maxEntriesPerTrade: r.max_entries_per_trade,
    },
    settings: {
      tradeMode: r.trade_mode,
      subscriptionType: r.trade_mode,
      allocationMode: r.allocation_mode,
      allocationPercentageMin: r.allocation_percentage_min,
      allocationPercentageMax: r.allocation_percentage_max,
      allocationAmountUsd: numberOrNull(r.allocation_amount_usd_micro),
      allocationAmountSol: numberOrNull(r.allocation_amount_sol_lamports),
      goLiveUponConfirmation: r.go_live_upon_confirmation,
      isPaused: r.is_paused,
    },
    ledger: ledgerOf(r),
    bridge: r.bridge_status ? { status: r.bridge_status, transactionId: r.bridge_transaction_id } : null,
    reconciliation: r.reconciliation_status
      ? {
          status: r.reconciliation_status,
          venueEquityMicro: numberOrNull(r.venue_equity_micro),
          venueFreeMarginMicro: numberOrNull(r.venue_free_margin_micro),
          gapMicro: numberOrNull(r.venue_gap_micro),
        }
      : null,
    subscribedAt: r.subscribed_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export const viewOfPool = (p: FollowedPool): PoolView => ({
  agentId: p.agentId,
  walletContext: p.walletContext,
  terms: p.terms,
  settings: p.settings,
  ledger: p.ledger,
  bridge: p.bridge,
  reconciliation: p.reconciliation,
  subscribedAt: p.subscribedAt,
  updatedAt: p.updatedAt,
});

/** Only the fields of the allocation mode are set; the others are left out. */
function allocationFields(s: FollowSettings) {
  return {
    ...(s.allocationPercentageMin !== null ? { allocationPercentageMin: s.allocationPercentageMin } : {}),
    ...(s.allocationPercentageMax !== null ? { allocationPercentageMax: s.allocationPercentageMax } : {}),
    ...(s.allocationAmountUsd !== null ? { allocationAmountUsd: microToUsd(s.allocationAmountUsd) } : {}),
    ...(s.allocationAmountSol !== null ? { allocationAmountSol: lamportsToSol(s.allocationAmountSol) } : {}),
  };
}

function audit(f: ReturnType<typeof poolFigures>, observed: Reconciliation | null, bridge: BridgeStatus | null): SubscriptionRecord['allocationBalanceAudit'] {
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
    ...(observed?.venueEquityMicro != null ? { venueEquityUsd: u(observed.venueEquityMicro) } : {}),
    ...(observed?.venueFreeMarginMicro != null ? { venueFreeMarginUsd: u(observed.venueFreeMarginMicro) } : {}),
    ...(observed?.gapMicro != null ? { venueGapUsd: u(observed.gapMicro) } : {}),
    ...(bridge ? { bridgeStatus: bridge } : {}),
  };
}

export function recordOf(v: PoolView): SubscriptionRecord {
  const { terms: t, settings: s, walletContext } = v;
  const f = poolFigures(v.ledger, {
    walletContext,
    venue: t.venue,
    maxLeverage: t.maxLeverage,
    successFeePercent: t.successFeePercent,
    reconciliationStatus: v.reconciliation?.status ?? null,
  });
  const u = microToUsd;
  const realPerp = walletContext === 'real' && t.venue === 'PERP_VENUE';
  const bridgeStatus = realPerp ? (v.bridge?.status ?? null) : null;
  return {
    agent: v.agentId,
    agentName: t.agentName,
    agentImageUrl: t.agentImageUrl,
    subscribedAt: v.subscribedAt,
    createdAt: v.subscribedAt,
    updatedAt: v.updatedAt,
    subscriptionType: s.tradeMode,
    tradeMode: s.tradeMode,
    walletContext,
    walletMode: walletModeOf(walletContext),
    allocationMode: s.allocationMode,
    ...allocationFields(s),
    allocatedUsd: u(f.allocatedUsd),
    inUseUsd: u(f.inUseUsd),
    withdrawableUsd: u(f.withdrawableUsd),
    currentBalanceUsd: u(f.currentBalanceUsd),
    availableUsd: u(f.availableUsd),
    inTradesUsd: u(f.inTradesUsd),
    feeBufferUsd: u(f.feeBufferUsd),
    lockedInPositionsUsd: u(f.lockedInPositionsUsd),
    venue: t.venue,
    // Live figures of the shared perp-venue account, as the reconciliation worker last observed
    // them: null for spot and virtual pools, and until the first observation.
    perpVenueTotalEquityUsd: realPerp && v.reconciliation?.venueEquityMicro != null ? u(v.reconciliation.venueEquityMicro) : null,
    perpVenueFreeMarginUsd: realPerp && v.reconciliation?.venueFreeMarginMicro != null ? u(v.reconciliation.venueFreeMarginMicro) : null,
    bridgeStatus,
    bridgeTransactionId: realPerp ? (v.bridge?.transactionId ?? null) : null,
    pendingDeltaUsd: u(f.pendingDeltaUsd),
    minAllocationUsd: u(t.minAllocationUsd),
    minTradeUsd: u(t.minTradeUsd),
    minPerTradePercent: t.minPerTradePercent,
    recommendedPerTradePercent: t.recommendedPerTradePercent,
    maxConcurrentPositions: t.maxConcurrentPositions,
    maxEntriesPerTrade: t.maxEntriesPerTrade,
    allocationBalanceAudit: audit(f, walletContext === 'real' ? v.reconciliation : null, bridgeStatus),
    goLiveUponConfirmation: s.goLiveUponConfirmation,
    isPaused: s.isPaused,
  };
}

/** The record of a read-model row (queries, the conventional baseline). */
export const subscriptionRecord = (r: SubscriptionRow): SubscriptionRecord => recordOf(viewOfRow(r));

/** The record of a pool's state (a command's answer): equal to the row's once projected. */
export const subscriptionRecordOfPool = (p: FollowedPool): SubscriptionRecord => recordOf(viewOfPool(p));

/**
 * The record as the list answers it, in the exact bytes the response serializer would write (the
 * schema's parse, then JSON): the projector stores it with the row, so the list, the hottest read,
 * joins stored text instead of computing and serializing every record on every request.
 */
export const renderedRecord = (p: FollowedPool): string => JSON.stringify(subscriptionRecordSchema.parse(subscriptionRecordOfPool(p)));
