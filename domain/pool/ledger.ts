// The figures of a subscription record and of its allocationBalanceAudit (docs/domain-rules.md, "Pool
// ledger"): pure functions of the pool's ledger inputs, all integer micro-USD. The domain, the
// read model and the auditor views all compute them here, so the maths exists once.
import type { Venue } from '../agent/record.ts';
import { mulDiv, percentFraction, toUnits, type MicroUsd } from '../shared/money.ts';
import type { WalletContext } from '../wallet/events.ts';

export interface LedgerInputs {
  /** confirmed adds */
  confirmedIn: MicroUsd;
  /** confirmed withdrawals */
  confirmedOut: MicroUsd;
  /** realized PnL of closed trades, net of venue fees */
  realized: MicroUsd;
  /** mark-to-market PnL of open trades */
  unrealized: MicroUsd;
  /** margin of open trades */
  locked: MicroUsd;
  pendingIn: MicroUsd;
  pendingOut: MicroUsd;
  /** success fees already settled from this pool */
  feesCharged: MicroUsd;
}

export const emptyLedger = (): LedgerInputs => ({
  confirmedIn: 0,
  confirmedOut: 0,
  realized: 0,
  unrealized: 0,
  locked: 0,
  pendingIn: 0,
  pendingOut: 0,
  feesCharged: 0,
});

export type ReconciliationStatus = 'IN_SYNC' | 'GAP' | 'UNKNOWN';

export interface LedgerTerms {
  walletContext: WalletContext;
  venue: Venue;
  maxLeverage: number;
  successFeePercent: number;
  /** the last venue check of a real pool; absent until first checked */
  reconciliationStatus?: ReconciliationStatus | null;
}

/** A followed pool's ledger terms: its context, the agent terms it keeps and its last venue check. */
export const ledgerTermsOf = (pool: {
  walletContext: WalletContext;
  terms: { venue: Venue; maxLeverage: number; successFeePercent: number };
  reconciliation: { status: ReconciliationStatus } | null;
}): LedgerTerms => ({
  walletContext: pool.walletContext,
  venue: pool.terms.venue,
  maxLeverage: pool.terms.maxLeverage,
  successFeePercent: pool.terms.successFeePercent,
  reconciliationStatus: pool.reconciliation?.status ?? null,
});

/** Share of a success fee that goes to the platform (PLATFORM_FEE_SHARE, 0.2); the creator gets the rest. */
export const PLATFORM_FEE_SHARE: readonly [bigint, bigint] = [1n, 5n];
/** The smallest withdrawal (0.01 USD); anything withdrawable below it is dust. */
export const MIN_WITHDRAWAL_MICRO: MicroUsd = 10_000;

const max0 = (v: MicroUsd): MicroUsd => Math.max(0, v);

export const allocatedUsd = (l: LedgerInputs): MicroUsd => max0(l.confirmedIn - l.confirmedOut);

/** Equity headline without unrealized PnL: principal plus realized PnL minus settled fees. */
export const currentBalanceUsd = (l: LedgerInputs): MicroUsd => l.confirmedIn - l.confirmedOut + l.realized - l.feesCharged;

/**
 * The pool's value now: currentBalanceUsd plus the open trades' unrealized PnL (principal, realized
 * PnL net of venue fees, minus the success fees settled). What the daily loss limit measures; the
 * fee the pool would owe on exit is not taken off, so a profit does not look smaller than it is.
 */
export const equityUsd = (l: LedgerInputs): MicroUsd => currentBalanceUsd(l) + l.unrealized;

/** Perp venue: max(0, 0.05% × maxLeverage × allocated), floored to the micro-USD; spot venue: 0. */
export function feeBufferUsd(l: LedgerInputs, venue: Venue, maxLeverage: number): MicroUsd {
  if (venue !== 'PERP_VENUE') return 0;
  const leverageMicro = toUnits(maxLeverage, 6);
  return max0(mulDiv(allocatedUsd(l), leverageMicro * 5n, 10_000n * 1_000_000n));
}

/** successFeePercent% of `profit`, minus what was already charged: a high-water mark, never negative. */
function feeOn(profit: MicroUsd, successFeePercent: number, feesCharged: MicroUsd): MicroUsd {
  const [num, den] = percentFraction(successFeePercent);
  return max0(mulDiv(profit, num, den) - feesCharged);
}

/** The fee due if the pool fully exited now; 0 on a loss. */
export const estimatedSuccessFeeUsd = (l: LedgerInputs, successFeePercent: number): MicroUsd =>
  feeOn(l.realized + l.unrealized, successFeePercent, l.feesCharged);

/** The profit a settlement charges: realized PnL net of open losses (open gains never count). */
export const chargeableProfitUsd = (l: Pick<LedgerInputs, 'realized' | 'unrealized'>): MicroUsd => l.realized + Math.min(0, l.unrealized);

/** Owed on realized profit net of open losses, not yet settled. */
export const pendingSuccessFeeUsd = (l: LedgerInputs, successFeePercent: number): MicroUsd => feeOn(chargeableProfitUsd(l), successFeePercent, l.feesCharged);

/** Creator floor(fee × (1 − share)) to the micro-USD; the platform gets the rest, so the parts sum to the fee. */
export function splitFee(fee: MicroUsd, share: readonly [bigint, bigint] = PLATFORM_FEE_SHARE) {
  const [num, den] = share;
  const creator = mulDiv(fee, den - num, den);
  return { platform: fee - creator, creator };
}

export function reconciliationStatusOf(terms: LedgerTerms): ReconciliationStatus {
  if (terms.walletContext === 'virtual') return 'IN_SYNC';
  return terms.reconciliationStatus ?? 'UNKNOWN';
}

export interface PoolFigures {
  allocatedUsd: MicroUsd;
  depositedUsd: MicroUsd;
  currentBalanceUsd: MicroUsd;
  inUseUsd: MicroUsd;
  inTradesUsd: MicroUsd;
  lockedInPositionsUsd: MicroUsd;
  lockedMarginUsd: MicroUsd;
  feeBufferUsd: MicroUsd;
  availableUsd: MicroUsd;
  ledgerAvailableUsd: MicroUsd;
  withdrawableUsd: MicroUsd;
  pendingDeltaUsd: MicroUsd;
  realizedPnlUsd: MicroUsd;
  unrealizedPnlUsd: MicroUsd;
  netRealizedProfitUsd: MicroUsd;
  estimatedSuccessFeeUsd: MicroUsd;
  estimatedPlatformFeeUsd: MicroUsd;
  estimatedCreatorFeeUsd: MicroUsd;
  pendingPlatformFeeUsd: MicroUsd;
  pendingCreatorFeeUsd: MicroUsd;
  netUserPayoutUsd: MicroUsd;
  dustUsd: MicroUsd;
  reconciliationStatus: ReconciliationStatus;
}

/** Every figure of one pool, in micro-USD (the names are the spec's; JSON converts with microToUsd). */
export function poolFigures(l: LedgerInputs, terms: LedgerTerms): PoolFigures {
  const allocated = allocatedUsd(l);
  const current = currentBalanceUsd(l);
  const feeBuffer = feeBufferUsd(l, terms.venue, terms.maxLeverage);
  const ledgerAvailable = max0(current - l.locked - feeBuffer);
  const estimated = estimatedSuccessFeeUsd(l, terms.successFeePercent);
  const estimatedSplit = splitFee(estimated);
  const pendingSplit = splitFee(pendingSuccessFeeUsd(l, terms.successFeePercent));
  const withdrawable = max0(ledgerAvailable - l.pendingOut - pendingSplit.platform - pendingSplit.creator);
  return {
    allocatedUsd: allocated,
    depositedUsd: allocated,
    currentBalanceUsd: current,
    inUseUsd: l.locked,
    inTradesUsd: l.locked,
    lockedInPositionsUsd: l.locked,
    lockedMarginUsd: l.locked,
    feeBufferUsd: feeBuffer,
    availableUsd: max0(current - l.locked),
    ledgerAvailableUsd: ledgerAvailable,
    withdrawableUsd: withdrawable,
    pendingDeltaUsd: l.pendingIn - l.pendingOut,
    realizedPnlUsd: l.realized,
    unrealizedPnlUsd: l.unrealized,
    netRealizedProfitUsd: max0(l.realized),
    estimatedSuccessFeeUsd: estimated,
    estimatedPlatformFeeUsd: estimatedSplit.platform,
    estimatedCreatorFeeUsd: estimatedSplit.creator,
    pendingPlatformFeeUsd: pendingSplit.platform,
    pendingCreatorFeeUsd: pendingSplit.creator,
    netUserPayoutUsd: current + l.unrealized - estimated,
    dustUsd: withdrawable < MIN_WITHDRAWAL_MICRO ? withdrawable : 0,
    reconciliationStatus: reconciliationStatusOf(terms),
  };
}
