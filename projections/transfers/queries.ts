import type { Pool } from '../../infra/db.ts';

/** A transfer debited and not finished, as the recovery worker needs it. */
export interface TransferInFlight {
  transferId: string;
  /** the stream that recorded the debit and its plan */
  sourceStream: string;
  /** the interrupted request's correlation id, and the debit event (the recovery's causation) */
  correlationId: string;
  debitEventId: string;
}

/** Transfers debited before `before`, not waiting for the venue and not over, oldest first. */
export async function transfersInFlight(db: Pool, before: Date, limit: number): Promise<TransferInFlight[]> {
  const { rows } = await db.query<{ transfer_id: string; source_stream: string; correlation_id: string; debit_event_id: string }>(
    `SELECT transfer_id, source_stream, correlation_id, debit_event_id FROM transfers
     WHERE status IN ('debited', 'paid-out', 'rejected') AND debited_at < $1 ORDER BY debited_at LIMIT $2`,
    [before, limit],
  );
  return rows.map((r) => ({ transferId: r.transfer_id, sourceStream: r.source_stream, correlationId: r.correlation_id, debitEventId: r.debit_event_id }));
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
