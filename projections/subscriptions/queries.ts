import type { WalletContext } from '../../domain/wallet/events.ts';
import type { Pool } from '../../infra/db.ts';
import { subscriptionRecord, type SubscriptionRecord, type SubscriptionRow } from './record.ts';

/** The user's subscriptions, oldest first; optionally those of one wallet context. */
export async function listSubscriptions(db: Pool, userId: string, walletContext?: WalletContext): Promise<SubscriptionRecord[]> {
  // Named: parsed and planned once per connection (the list is the hottest read of the API).
  const { rows } = await db.query<SubscriptionRow>({
    name: 'list-subscriptions',
    text: `SELECT * FROM subscriptions WHERE user_id = $1 AND followed AND ($2::text IS NULL OR wallet_context = $2)
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
    text: 'SELECT * FROM subscriptions WHERE user_id = $1 AND agent_id = $2 AND wallet_context = $3 AND followed',
    values: [userId, agentId, walletContext],
  });
  return rows[0] ? subscriptionRecord(rows[0]) : null;
}
