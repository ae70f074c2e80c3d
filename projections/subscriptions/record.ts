// The spec's "Agent subscription record" and its allocationBalanceAudit, built from a PoolView
// (view.ts): the view holds inputs, the figures come from domain/pool/ledger.ts.
import { walletModeOf, type BridgeStatus, type FollowSettings } from '../../domain/pool/events.ts';
import { poolFigures } from '../../domain/pool/ledger.ts';
import type { FailedTransfer, FollowedPool, Reconciliation } from '../../domain/pool/state.ts';
import { LAMPORTS_PER_SOL, microToUsd } from '../../domain/shared/money.ts';
import { subscriptionRecordSchema, type SubscriptionRecord } from './record-schema.ts';
import { viewOfPool, viewOfRow, type PoolView, type SubscriptionRow } from './view.ts';

/** lamports → whole SOL as a number, through a decimal string (no float arithmetic). */
function lamportsToSol(lamports: number): number {
  const big = BigInt(lamports);
  return Number(`${big / LAMPORTS_PER_SOL}.${(big % LAMPORTS_PER_SOL).toString().padStart(9, '0')}`);
}

/** Only the fields of the allocation mode are set; the others are left out. */
function allocationFields(s: FollowSettings) {
  return {
    ...(s.allocationPercentageMin !== null ? { allocationPercentageMin: s.allocationPercentageMin } : {}),
    ...(s.allocationPercentageMax !== null ? { allocationPercentageMax: s.allocationPercentageMax } : {}),
    ...(s.allocationAmountUsd !== null ? { allocationAmountUsd: microToUsd(s.allocationAmountUsd) } : {}),
    ...(s.allocationAmountSol !== null ? { allocationAmountSol: lamportsToSol(s.allocationAmountSol) } : {}),
  };
}

function failedTransferOf(f: FailedTransfer): NonNullable<SubscriptionRecord['lastFailedTransfer']> {
  return {
    transferId: f.transferId,
    direction: f.direction === 'in' ? 'add' : 'withdrawal',
    amountUsd: microToUsd(f.amountMicro),
    reason: f.reason,
    failedAt: f.at,
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
    ...(v.lastFailedTransfer ? { lastFailedTransfer: failedTransferOf(v.lastFailedTransfer) } : {}),
    pendingDeltaUsd: u(f.pendingDeltaUsd),
    minAllocationUsd: u(t.minAllocationUsd),
    minTradeUsd: u(t.minTradeUsd),
    minPerTradePercent: t.minPerTradePercent,
    recommendedPerTradePercent: t.recommendedPerTradePercent,
    maxConcurrentPositions: t.maxConcurrentPositions,
    maxEntriesPerTrade: t.maxEntriesPerTrade,
    allocationBalanceAudit: audit(f, walletContext === 'real' ? v.reconciliation : null, bridgeStatus),
    goLiveUponConfirmation: s.goLiveUponConfirmation,
    isLive: v.live,
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
