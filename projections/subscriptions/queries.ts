import type { WalletContext } from '../../domain/wallet/events.ts';
import type { Pool } from '../../infra/db.ts';
import type { Position } from '../../infra/eventstore/port.ts';
import { checkpointOf } from '../checkpoints.ts';

/** The columns a record is made of (not the folded `state`, which only the projector reads). */
export const RECORD_COLUMNS = `user_id, agent_id, wallet_context, agent_name, agent_image_url, venue, max_leverage, success_fee_percent,
  min_allocation_micro, min_trade_micro, min_per_trade_percent, recommended_per_trade_percent, max_concurrent_positions,
  max_entries_per_trade, trade_mode, allocation_mode, allocation_percentage_min, allocation_percentage_max,
  allocation_amount_usd_micro, allocation_amount_sol_lamports, go_live_upon_confirmation, is_paused, confirmed_in_micro,
  confirmed_out_micro, realized_micro, unrealized_micro, locked_micro, pending_in_micro, pending_out_micro, fees_charged_micro,
  bridge_status, bridge_transaction_id, reconciliation_status, venue_equity_micro, venue_free_margin_micro, venue_gap_micro,
  last_failed_transfer, awaiting_go_live, subscribed_at, created_at, updated_at`;

/**
 * The user's subscriptions, oldest first, optionally those of one wallet context: the JSON array of
 * their records, joined from the records the projector rendered (record.ts renderedRecord).
 */
export async function subscriptionListJson(db: Pool, userId: string, walletContext?: WalletContext): Promise<string> {
  return (await subscriptionListAt(db, userId, walletContext)).json;
}

/**
 * The same list with the position the subscriptions read model had applied when it was read (its checkpoint, read in the same
 * statement, so the same snapshot): what a remembered list is compared with the caller's latest write by.
 */
export async function subscriptionListAt(db: Pool, userId: string, walletContext?: WalletContext): Promise<{ json: string; at: Position }> {
  // Named: parsed and planned once per connection (the list is the hottest read of the API).
  const { rows } = await db.query<{ list: string | null; commit_position: string | null; prepare_position: string | null }>({
    name: 'list-subscriptions-at',
    text: `SELECT (SELECT string_agg(record_json, ',' ORDER BY subscribed_at, agent_id, wallet_context) FROM subscriptions
        WHERE user_id = $1 AND followed AND ($2::text IS NULL OR wallet_context = $2)) AS list, c.commit_position, c.prepare_position
      FROM (VALUES (1)) one LEFT JOIN projection_checkpoints c ON c.name = 'subscriptions'`,
    values: [userId, walletContext ?? null],
  });
  return { json: `[${rows[0]?.list ?? ''}]`, at: checkpointOf(rows[0]) };
}

/** The group whose change drops a user's remembered lists: a batch that touched one of the user's pool streams. */
export const poolsGroupOf = (userId: string) => `pools:${userId}`;

/** The user whose pool a stream holds (`pool-<userId>.<agentId>.<walletContext>`, domain/pool/state.ts poolId); null for another stream. */
export const poolOwnerOfStream = (streamName: string): string | null => {
  if (!streamName.startsWith('pool-')) return null;
  const end = streamName.indexOf('.', 'pool-'.length);
  return end > 0 ? streamName.slice('pool-'.length, end) : null;
};

/** A real pool's ledger as the reconciliation worker compares it with the venue. */
export interface RealPoolLedger {
  poolId: string;
  venue: string;
  /** confirmedIn − confirmedOut + realized − feesCharged */
  currentBalanceMicro: number;
  /** every fee the pool stream settled, across its openings */
  feesChargedMicro: number;
  reconciliationStatus: string | null;
  venueEquityMicro: number | null;
  venueFreeMarginMicro: number | null;
  venueGapMicro: number | null;
}

/**
 * Followed real pools after `afterPoolId` (a cursor), in pool id order; not those with a leg at the
 * venue: the venue may count it before the ledger's settlement does, a gap that is only motion.
 */
export async function realPools(db: Pool, afterPoolId: string | null, limit: number): Promise<RealPoolLedger[]> {
  const { rows } = await db.query<Record<string, string | null>>({
    name: 'real-pools',
    // Fees: every fee the stream settled (state.feesSettledMicro), not only this opening's, since
    // the venue's account for the pool still holds what earlier openings paid.
    text: `SELECT s.pool_id, s.venue, s.confirmed_in_micro - s.confirmed_out_micro + s.realized_micro - s.fees_charged_micro AS current_micro,
        GREATEST(s.fees_charged_micro, COALESCE((st.state->>'feesSettledMicro')::bigint, 0)) AS fees_charged_micro,
        s.reconciliation_status, s.venue_equity_micro, s.venue_free_margin_micro, s.venue_gap_micro
      FROM subscriptions s LEFT JOIN subscription_states st ON st.pool_id = s.pool_id
      WHERE s.wallet_context = 'real' AND s.followed AND s.pending_in_micro = 0 AND s.pending_out_micro = 0
        AND ($1::text IS NULL OR s.pool_id > $1)
      ORDER BY s.pool_id LIMIT $2`,
    values: [afterPoolId, limit],
  });
  const n = (v: string | null | undefined) => (v === null || v === undefined ? null : Number(v));
  return rows.map((r) => ({
    poolId: r.pool_id!,
    venue: r.venue!,
    currentBalanceMicro: Number(r.current_micro),
    feesChargedMicro: Number(r.fees_charged_micro),
    reconciliationStatus: r.reconciliation_status ?? null,
    venueEquityMicro: n(r.venue_equity_micro),
    venueFreeMarginMicro: n(r.venue_free_margin_micro),
    venueGapMicro: n(r.venue_gap_micro),
  }));
}

/**
 * The pools that follow an agent now, for the signal worker's fan-out. A follow made while a signal
 * is being executed may miss it (the read model lags by a few ms): the pool takes the next one.
 */
export async function followerPools(db: Pool, agentId: string): Promise<string[]> {
  const { rows } = await db.query<{ pool_id: string }>({
    name: 'follower-pools',
    text: 'SELECT pool_id FROM subscriptions WHERE agent_id = $1 AND followed ORDER BY pool_id',
    values: [agentId],
  });
  return rows.map((r) => r.pool_id);
}
