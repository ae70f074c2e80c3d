// Where the transfer recovery looks for half-done follows: one row per wallet transfer (credited_at
// null until the pool's AllocationAdded with its id) and one row per (agent, user) seat holder
// (followed_at null until the user follows the agent). Candidates only: the recovery decides on
// the streams.
import { betaSeatSchema } from '../../domain/agent/events.ts';
import { allocationAddedSchema, agentFollowedSchema } from '../../domain/pool/events.ts';
import { virtualFundsAllocatedSchema } from '../../domain/wallet/events.ts';
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
];

type Apply = (client: PoolClient, event: RecordedEvent) => Promise<unknown>;

// Upserts on both sides: each row is right whichever of its events a rebuild meets first.
const handlers: Record<string, { stream: string; apply: Apply }> = {
  VirtualFundsAllocated: {
    stream: 'wallet-',
    apply(client, event) {
      const d = virtualFundsAllocatedSchema.parse(event.data);
      return client.query(
        `INSERT INTO transfers (transfer_id, user_id, pool_id, amount_micro, debited_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (transfer_id) DO UPDATE SET user_id = $2, pool_id = $3, amount_micro = $4, debited_at = $5`,
        [d.transferId, event.streamName.slice('wallet-'.length), d.poolId, d.amountMicro, event.metadata.occurredAt],
      );
    },
  },
  AllocationAdded: {
    stream: 'pool-',
    apply(client, event) {
      const d = allocationAddedSchema.parse(event.data);
      return client.query(
        `INSERT INTO transfers (transfer_id, pool_id, credited_at) VALUES ($1, $2, $3)
         ON CONFLICT (transfer_id) DO UPDATE SET credited_at = $3`,
        [d.transferId, event.streamName.slice('pool-'.length), event.metadata.occurredAt],
      );
    },
  },
  AgentFollowed: {
    stream: 'pool-',
    apply(client, event) {
      const d = agentFollowedSchema.parse(event.data);
      return client.query(
        `INSERT INTO beta_seat_holders (agent_id, user_id, followed_at) VALUES ($1, $2, $3)
         ON CONFLICT (agent_id, user_id) DO UPDATE SET followed_at = COALESCE(beta_seat_holders.followed_at, $3)`,
        [d.agentId, d.userId, d.subscribedAt],
      );
    },
  },
  BetaSeatTaken: {
    stream: 'agent-',
    apply(client, event) {
      const d = betaSeatSchema.parse(event.data);
      return client.query(
        `INSERT INTO beta_seat_holders (agent_id, user_id, seat_taken_at) VALUES ($1, $2, $3)
         ON CONFLICT (agent_id, user_id) DO UPDATE SET seat_taken_at = $3`,
        [event.streamName.slice('agent-'.length), d.userId, d.at],
      );
    },
  },
  BetaSeatReleased: {
    stream: 'agent-',
    apply(client, event) {
      const d = betaSeatSchema.parse(event.data);
      return client.query('UPDATE beta_seat_holders SET seat_taken_at = NULL WHERE agent_id = $1 AND user_id = $2', [
        event.streamName.slice('agent-'.length),
        d.userId,
      ]);
    },
  },
};

function handlerOf(event: RecordedEvent) {
  const handler = Object.hasOwn(handlers, event.type) ? handlers[event.type] : undefined;
  return handler && event.streamName.startsWith(handler.stream) ? handler : undefined;
}

/**
 * A batch in one upsert per kind: debits, credits and follows each set their own columns, so
 * they commute; within a kind the last event of a key wins (a follow keeps the first time, as
 * COALESCE does one by one). Seat taken / released do not commute and go one by one, in order.
 * Equal to applying the events one by one (test/projections/batch-equivalence.test.ts).
 */
async function applyBatch(client: PoolClient, events: RecordedEvent[]): Promise<void> {
  const debits = new Map<string, unknown[]>();
  const credits = new Map<string, unknown[]>();
  const follows = new Map<string, unknown[]>();
  const seats: RecordedEvent[] = [];
  for (const event of events) {
    if (!handlerOf(event)) continue;
    if (event.type === 'VirtualFundsAllocated') {
      const d = virtualFundsAllocatedSchema.parse(event.data);
      debits.set(d.transferId, [d.transferId, event.streamName.slice('wallet-'.length), d.poolId, d.amountMicro, event.metadata.occurredAt]);
    } else if (event.type === 'AllocationAdded') {
      const d = allocationAddedSchema.parse(event.data);
      credits.set(d.transferId, [d.transferId, event.streamName.slice('pool-'.length), event.metadata.occurredAt]);
    } else if (event.type === 'AgentFollowed') {
      const d = agentFollowedSchema.parse(event.data);
      const key = `${d.agentId}\n${d.userId}`;
      if (!follows.has(key)) follows.set(key, [d.agentId, d.userId, d.subscribedAt]);
    } else seats.push(event);
  }
  const columns = (rows: Map<string, unknown[]>) => {
    const list = [...rows.values()];
    return list[0]!.map((_, i) => list.map((r) => r[i]));
  };
  // Debits and credits of one transfer set different columns: one upsert, each side keeping
  // what the other does not carry.
  const transfers = new Map<string, Array<unknown>>();
  for (const [id, [, userId, poolId, amount, debitedAt]] of debits) transfers.set(id, [id, userId, poolId, amount, debitedAt, null]);
  for (const [id, [, poolId, creditedAt]] of credits) {
    const row = transfers.get(id) ?? [id, null, poolId, null, null, null];
    row[5] = creditedAt;
    transfers.set(id, row);
  }
  if (transfers.size) {
    await client.query(
      `INSERT INTO transfers (transfer_id, user_id, pool_id, amount_micro, debited_at, credited_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::timestamptz[], $6::timestamptz[])
       ON CONFLICT (transfer_id) DO UPDATE SET
         user_id = COALESCE(excluded.user_id, transfers.user_id),
         pool_id = CASE WHEN excluded.debited_at IS NOT NULL THEN excluded.pool_id ELSE transfers.pool_id END,
         amount_micro = COALESCE(excluded.amount_micro, transfers.amount_micro),
         debited_at = COALESCE(excluded.debited_at, transfers.debited_at),
         credited_at = COALESCE(excluded.credited_at, transfers.credited_at)`,
      columns(transfers),
    );
  }
  if (follows.size) {
    await client.query(
      `INSERT INTO beta_seat_holders (agent_id, user_id, followed_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[])
       ON CONFLICT (agent_id, user_id) DO UPDATE SET followed_at = COALESCE(beta_seat_holders.followed_at, excluded.followed_at)`,
      columns(follows),
    );
  }
  for (const event of seats) await handlerOf(event)!.apply(client, event);
}

export const transfersProjector: Projector = {
  name: 'transfers',
  migrations,
  tables: ['transfers', 'beta_seat_holders'],
  applyBatch,
  async apply(client, event) {
    await handlerOf(event)?.apply(client, event);
  },
};
