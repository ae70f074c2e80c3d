// What a subscription record is made of (PoolView), from a read-model row or from a pool's state.
import type { AgentTerms, BridgeStatus, FollowSettings } from '../../domain/pool/events.ts';
import type { LedgerInputs, ReconciliationStatus } from '../../domain/pool/ledger.ts';
import type { FailedTransfer, FollowedPool, Reconciliation } from '../../domain/pool/state.ts';
import type { Venue } from '../../domain/agent/record.ts';
import type { MicroUsd } from '../../domain/shared/money.ts';
import type { WalletContext } from '../../domain/wallet/events.ts';
import type { SubscriptionRecord } from './record-schema.ts';

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
  /** the last movement the venue failed (absent from rows of the conventional baseline) */
  last_failed_transfer?: FailedTransfer | null;
  /** followed with goLiveUponConfirmation false and not live yet (absent from rows of the conventional baseline: live) */
  awaiting_go_live?: boolean;
  subscribed_at: Date;
  created_at: Date;
  updated_at: Date;
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
  lastFailedTransfer: FailedTransfer | null;
  /** whether the agent's signals trade in the pool: false while it awaits its go-live */
  live: boolean;
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
    lastFailedTransfer: r.last_failed_transfer ?? null,
    live: r.awaiting_go_live !== true,
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
  lastFailedTransfer: p.lastFailedTransfer ?? null,
  live: p.awaitingGoLive !== true,
  subscribedAt: p.subscribedAt,
  updatedAt: p.updatedAt,
});
