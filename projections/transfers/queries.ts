import type { Pool } from '../../infra/db.ts';

/** Debits older than `before` whose pool credit has not been applied, oldest first. */
export async function uncreditedTransfers(db: Pool, before: Date, limit: number): Promise<Array<{ userId: string; transferId: string }>> {
  const { rows } = await db.query<{ user_id: string; transfer_id: string }>(
    `SELECT user_id, transfer_id FROM transfers WHERE credited_at IS NULL AND debited_at < $1 ORDER BY debited_at LIMIT $2`,
    [before, limit],
  );
  return rows.map((r) => ({ userId: r.user_id, transferId: r.transfer_id }));
}

/** Beta seats taken before `before` by users who never followed the agent, oldest first. */
export async function unfollowedSeats(
  db: Pool,
  before: Date,
  limit: number,
): Promise<Array<{ agentId: string; userId: string; takenAt: Date }>> {
  const { rows } = await db.query<{ agent_id: string; user_id: string; seat_taken_at: Date }>(
    `SELECT agent_id, user_id, seat_taken_at FROM beta_seat_holders
     WHERE seat_taken_at IS NOT NULL AND followed_at IS NULL AND seat_taken_at < $1 ORDER BY seat_taken_at LIMIT $2`,
    [before, limit],
  );
  return rows.map((r) => ({ agentId: r.agent_id, userId: r.user_id, takenAt: r.seat_taken_at }));
}
