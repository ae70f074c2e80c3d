// Transfers in flight, for the recovery worker: one row per transfer (its source, how far it came), and one row per (agent, user) beta seat holder (its newest claim's time, and how many of the user's pools of the agent are open).
// Candidates only: the recovery decides on the streams.
import { seatEventSchema } from '../../domain/agent/seats.ts';
import { agentFollowedSchema } from '../../domain/pool/events.ts';
import { ownerOf, poolEndpointOf } from '../../domain/transfer/plan.ts';
import { transferFactOf, transferIdOf, transferProgress as PROGRESS, type TransferFact } from '../../domain/transfer/facts.ts';
import type { Migration, PoolClient } from '../../infra/db.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import type { Projector } from '../projector.ts';

const migrations: Migration[] = [
  {
    id: 'transfers/001-transfers-and-seat-holders',
    sql: `CREATE TABLE transfers (
      transfer_id text PRIMARY KEY,
      user_id text,
      pool_id text,
      amount_micro bigint,
      debited_at timestamptz,
      credited_at timestamptz
    );
    CREATE INDEX transfers_uncredited ON transfers (debited_at) WHERE credited_at IS NULL;
    CREATE TABLE beta_seat_holders (
      agent_id text NOT NULL,
      user_id text NOT NULL,
      seat_taken_at timestamptz,
      followed_at timestamptz,
      PRIMARY KEY (agent_id, user_id)
    );
    CREATE INDEX beta_seat_holders_unfollowed ON beta_seat_holders (seat_taken_at)
      WHERE seat_taken_at IS NOT NULL AND followed_at IS NULL;`,
  },
  {
    // Transfers became a process of their own (domain/transfer): rows now hold the status the
    // process reached (the recovery reads the plan from the debit event, not from here).
    // Emptied with the checkpoint: the projector replays.
    id: 'transfers/002-transfer-process',
    sql: `DROP TABLE transfers;
    CREATE TABLE transfers (
      transfer_id text PRIMARY KEY,
      status text NOT NULL,
      progress smallint NOT NULL,
      source_user_id text,
      debit_event_id text,
      correlation_id text,
      debited_at timestamptz,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX transfers_in_flight ON transfers (debited_at) WHERE status IN ('debited', 'rejected');
    DELETE FROM beta_seat_holders;
    DELETE FROM projection_checkpoints WHERE name = 'transfers';`,
  },
  {
    // Transfers gained pool sources (withdrawals) and venue legs: rows name the stream holding the
    // plan. Emptied with the checkpoint: the projector replays.
    id: 'transfers/003-source-stream',
    sql: `ALTER TABLE transfers ADD COLUMN source_stream text;
    DROP INDEX transfers_in_flight;
    CREATE INDEX transfers_in_flight ON transfers (debited_at) WHERE status IN ('debited', 'paid-out', 'rejected');
    CREATE INDEX transfers_pending ON transfers (debited_at) WHERE status = 'pending';
    DELETE FROM transfers;
    DELETE FROM beta_seat_holders;
    DELETE FROM projection_checkpoints WHERE name = 'transfers';`,
  },
  {
    // A pool's leg at the venue, for the reconciliation worker: which pool, which way, how much.
    id: 'transfers/004-venue-legs',
    sql: `ALTER TABLE transfers ADD COLUMN leg_pool_id text, ADD COLUMN leg_direction text, ADD COLUMN leg_amount_micro bigint;
    DELETE FROM transfers;
    DELETE FROM beta_seat_holders;
    DELETE FROM projection_checkpoints WHERE name = 'transfers';`,
  },
  {
    // Seats are held by claims: a seat whose holder follows no more (a stop that died before it gave
    // the claim back, a claim a follow left) is a candidate too, so rows count the open pools
    // instead of remembering a first follow. seat_taken_at is the newest claim's time. Replayed.
    id: 'transfers/005-seat-claims',
    sql: `ALTER TABLE beta_seat_holders DROP COLUMN followed_at, ADD COLUMN open_pools integer NOT NULL DEFAULT 0;
    CREATE INDEX beta_seat_holders_orphan ON beta_seat_holders (seat_taken_at) WHERE seat_taken_at IS NOT NULL AND open_pools = 0;
    DELETE FROM transfers;
    DELETE FROM beta_seat_holders;
    DELETE FROM projection_checkpoints WHERE name = 'transfers';`,
  },
];

type Row = [
  id: string,
  status: string,
  progress: number,
  userId: string | null,
  eventId: string | null,
  correlationId: string | null,
  debitedAt: string | null,
  updatedAt: string,
  sourceStream: string | null,
  legPoolId: string | null,
  legDirection: string | null,
  legAmountMicro: number | null,
];

function rowOf(fact: TransferFact, event: RecordedEvent): Row {
  const at = event.metadata.occurredAt;
  const leg: [string | null, string | null, number | null] = fact.leg ? [fact.leg.poolId, fact.leg.direction, fact.leg.amountMicro] : [null, null, null];
  if (!('transfer' in fact)) return [fact.transferId, fact.status, PROGRESS[fact.status], null, null, null, null, at, null, ...leg];
  const { transfer } = fact;
  return [
    transfer.transferId,
    fact.status,
    PROGRESS[fact.status],
    ownerOf(transfer.from),
    event.id,
    event.metadata.correlationId,
    at,
    at,
    event.streamName,
    ...leg,
  ];
}

/** Rows of one transfer merge: the further status wins, the debit's columns are kept. */
function merge(a: Row, b: Row): Row {
  const later = b[2] >= a[2] ? b : a;
  return [
    a[0],
    later[1],
    later[2],
    a[3] ?? b[3],
    a[4] ?? b[4],
    a[5] ?? b[5],
    a[6] ?? b[6],
    later[7],
    a[8] ?? b[8],
    a[9] ?? b[9],
    a[10] ?? b[10],
    a[11] ?? b[11],
  ];
}

async function upsertTransfers(client: PoolClient, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const column = (i: number) => rows.map((r) => r[i]);
  await client.query(
    `INSERT INTO transfers (transfer_id, status, progress, source_user_id, debit_event_id, correlation_id, debited_at, updated_at, source_stream,
       leg_pool_id, leg_direction, leg_amount_micro)
     SELECT * FROM unnest($1::text[], $2::text[], $3::smallint[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::text[],
       $10::text[], $11::text[], $12::bigint[])
     ON CONFLICT (transfer_id) DO UPDATE SET
       status = CASE WHEN excluded.progress >= transfers.progress THEN excluded.status ELSE transfers.status END,
       progress = GREATEST(excluded.progress, transfers.progress),
       source_user_id = COALESCE(transfers.source_user_id, excluded.source_user_id),
       debit_event_id = COALESCE(transfers.debit_event_id, excluded.debit_event_id),
       correlation_id = COALESCE(transfers.correlation_id, excluded.correlation_id),
       debited_at = COALESCE(transfers.debited_at, excluded.debited_at),
       source_stream = COALESCE(transfers.source_stream, excluded.source_stream),
       leg_pool_id = COALESCE(transfers.leg_pool_id, excluded.leg_pool_id),
       leg_direction = COALESCE(transfers.leg_direction, excluded.leg_direction),
       leg_amount_micro = COALESCE(transfers.leg_amount_micro, excluded.leg_amount_micro),
       updated_at = CASE WHEN excluded.progress >= transfers.progress THEN excluded.updated_at ELSE transfers.updated_at END`,
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map(column),
  );
}

// Seat holders: upserts on both sides, so each row is right whichever event a rebuild meets first.
// A claim taken moves the row's time on (the grace period counts from the newest claim); a claim
// given back while others hold the seat changes nothing here.
async function seatChanged(client: PoolClient, event: RecordedEvent) {
  const { type, data } = seatEventSchema.parse({ type: event.type, data: event.data });
  if (type === 'BetaSeatTaken' || type === 'BetaSeatClaimAdded') {
    await client.query(
      `INSERT INTO beta_seat_holders (agent_id, user_id, seat_taken_at) VALUES ($1, $2, $3)
       ON CONFLICT (agent_id, user_id) DO UPDATE SET seat_taken_at = $3`,
      [data.agentId, data.userId, data.at],
    );
  } else if (type === 'BetaSeatReleased') {
    await client.query('UPDATE beta_seat_holders SET seat_taken_at = NULL WHERE agent_id = $1 AND user_id = $2', [data.agentId, data.userId]);
  }
}

/** Pools opened (+1) and stopped (−1) per agent and user: sums, so a batch adds them in any order. */
async function openPools(client: PoolClient, rows: Array<[string, string, number]>) {
  if (rows.length === 0) return;
  await client.query(
    `INSERT INTO beta_seat_holders (agent_id, user_id, open_pools)
     SELECT * FROM unnest($1::text[], $2::text[], $3::int[])
     ON CONFLICT (agent_id, user_id) DO UPDATE SET open_pools = beta_seat_holders.open_pools + excluded.open_pools`,
    [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
  );
}

const isSeatEvent = (e: RecordedEvent) => e.streamName.startsWith('betaseats-');

/**
 * A batch in one upsert per table: transfer rows merge by how far they came, open pools add up.
 * Seat taken / released do not commute and go one by one, in order. Equal to applying the events
 * one by one (test/projections/batch-equivalence.test.ts).
 */
async function applyBatch(client: PoolClient, events: RecordedEvent[]): Promise<void> {
  const transfers = new Map<string, Row>();
  const opened = new Map<string, [string, string, number]>();
  const count = (agentId: string, userId: string, delta: number) => {
    const key = `${agentId}\n${userId}`;
    const row = opened.get(key);
    if (row) row[2] += delta;
    else opened.set(key, [agentId, userId, delta]);
  };
  const seats: RecordedEvent[] = [];
  for (const event of events) {
    const fact = transferFactOf(event);
    if (fact) {
      const id = transferIdOf(fact);
      const row = rowOf(fact, event);
      const known = transfers.get(id);
      transfers.set(id, known ? merge(known, row) : row);
    } else if (event.type === 'AgentFollowed' && event.streamName.startsWith('pool-')) {
      const d = agentFollowedSchema.parse(event.data);
      count(d.agentId, d.userId, 1);
    } else if (event.type === 'PoolClosed' && event.streamName.startsWith('pool-')) {
      const pool = poolEndpointOf(event.streamName.slice('pool-'.length));
      count(pool.agentId, pool.userId, -1);
    } else if (isSeatEvent(event)) seats.push(event);
  }
  await upsertTransfers(client, [...transfers.values()]);
  await openPools(client, [...opened.values()]);
  for (const event of seats) await seatChanged(client, event);
}

export const transfersProjector: Projector = {
  name: 'transfers',
  migrations,
  tables: ['transfers', 'beta_seat_holders'],
  applyBatch,
  apply: (client, event) => applyBatch(client, [event]),
};
