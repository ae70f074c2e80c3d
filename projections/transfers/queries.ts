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

/** Beta seats whose newest claim was taken before `before`, held by users with no pool of the agent open, oldest first. */
export async function unfollowedSeats(db: Pool, before: Date, limit: number): Promise<Array<{ agentId: string; userId: string; takenAt: Date }>> {
  const { rows } = await db.query<{ agent_id: string; user_id: string; seat_taken_at: Date }>(
    `SELECT agent_id, user_id, seat_taken_at FROM beta_seat_holders
     WHERE seat_taken_at IS NOT NULL AND open_pools = 0 AND seat_taken_at < $1 ORDER BY seat_taken_at LIMIT $2`,
    [before, limit],
  );
  return rows.map((r) => ({ agentId: r.agent_id, userId: r.user_id, takenAt: r.seat_taken_at }));
}

/** A pool's leg waiting for the venue, as the reconciliation worker needs it. */
export interface LegAtVenue {
  transferId: string;
  poolId: string;
  userId: string;
  direction: 'in' | 'out';
  amountMicro: number;
  venue: string;
  /** the request that started it: the settlement's events belong to it */
  correlationId: string | null;
}

/** Legs at the venue after `afterTransferId` (a cursor), in transfer id order. */
export async function legsAtVenue(db: Pool, afterTransferId: string | null, limit: number): Promise<LegAtVenue[]> {
  const { rows } = await db.query<{
    transfer_id: string;
    leg_pool_id: string;
    user_id: string;
    leg_direction: 'in' | 'out';
    leg_amount_micro: string;
    venue: string;
    correlation_id: string | null;
  }>({
    name: 'legs-at-venue',
    text: `SELECT t.transfer_id, t.leg_pool_id, s.user_id, t.leg_direction, t.leg_amount_micro, s.venue, t.correlation_id
      FROM transfers t JOIN subscriptions s ON s.pool_id = t.leg_pool_id
      WHERE t.status = 'pending' AND t.leg_pool_id IS NOT NULL AND ($1::text IS NULL OR t.transfer_id > $1)
      ORDER BY t.transfer_id LIMIT $2`,
    values: [afterTransferId, limit],
  });
  return rows.map((r) => ({
    transferId: r.transfer_id,
    poolId: r.leg_pool_id,
    userId: r.user_id,
    direction: r.leg_direction,
    amountMicro: Number(r.leg_amount_micro),
    venue: r.venue,
    correlationId: r.correlation_id,
  }));
}
