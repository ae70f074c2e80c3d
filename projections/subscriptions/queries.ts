import type { WalletContext } from '../../domain/wallet/events.ts';
import type { Pool } from '../../infra/db.ts';
import { subscriptionRecord, type SubscriptionRecord, type SubscriptionRow } from './record.ts';

/** The columns a record is made of (not the folded `state`, which only the projector reads). */
export const RECORD_COLUMNS = `user_id, agent_id, wallet_context, agent_name, agent_image_url, venue, max_leverage, success_fee_percent,
  min_allocation_micro, min_trade_micro, min_per_trade_percent, recommended_per_trade_percent, max_concurrent_positions,
  max_entries_per_trade, trade_mode, allocation_mode, allocation_percentage_min, allocation_percentage_max,
  allocation_amount_usd_micro, allocation_amount_sol_lamports, go_live_upon_confirmation, is_paused, confirmed_in_micro,
  confirmed_out_micro, realized_micro, unrealized_micro, locked_micro, pending_in_micro, pending_out_micro, fees_charged_micro,
  bridge_status, bridge_transaction_id, reconciliation_status, venue_equity_micro, venue_free_margin_micro, venue_gap_micro,
  subscribed_at, created_at, updated_at`;

/** The user's subscriptions, oldest first; optionally those of one wallet context. */
export async function listSubscriptions(db: Pool, userId: string, walletContext?: WalletContext): Promise<SubscriptionRecord[]> {
  // Named: parsed and planned once per connection (the list is the hottest read of the API).
  const { rows } = await db.query<SubscriptionRow>({
    name: 'list-subscriptions',
    text: `SELECT ${RECORD_COLUMNS} FROM subscriptions WHERE user_id = $1 AND followed AND ($2::text IS NULL OR wallet_context = $2)
     ORDER BY subscribed_at, agent_id, wallet_context`,
    values: [userId, walletContext ?? null],
  });
  return rows.map(subscriptionRecord);
}

export async function getSubscription(
  db: Pool,
  userId: string,
  agentId: string,
  walletContext: WalletContext,
): Promise<SubscriptionRecord | null> {
  const { rows } = await db.query<SubscriptionRow>({
    name: 'get-subscription',
    text: `SELECT ${RECORD_COLUMNS} FROM subscriptions WHERE user_id = $1 AND agent_id = $2 AND wallet_context = $3 AND followed`,
    values: [userId, agentId, walletContext],
  });
  return rows[0] ? subscriptionRecord(rows[0]) : null;
}
