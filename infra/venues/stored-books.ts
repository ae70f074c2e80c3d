// The simulated venues' books as PostgreSQL rows (stored.ts runs the calls): the tables, and one
// pool's rows loaded into the simulation's own classes and written back once a call changed them.
import type { Migration, PoolClient } from '../db.ts';
import { PoolBook, type PoolEntry } from './book.ts';
import { SimulatedBridge, type BridgeDelays } from './bridge.ts';
import { SimulatedChain } from './chain.ts';
import type { VenueName } from './errors.ts';
import type { BridgeTransfer, ChainTransfer, MarginLock } from './port.ts';
import type { Due, FailRule, SimulatedTransfers } from './settlements.ts';

export const simulatedBookMigrations: Migration[] = [
  {
    id: 'venue/003-simulated-books',
    sql: `CREATE TABLE simulated_venue_pools (
      venue text NOT NULL,
      pool_id text NOT NULL,
      equity_micro bigint NOT NULL DEFAULT 0,
      margin_in_use_micro bigint NOT NULL DEFAULT 0,
      outgoing_micro bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (venue, pool_id)
    );
    CREATE TABLE simulated_venue_transfers (
      venue text NOT NULL,
      transfer_id text NOT NULL,
      pool_id text NOT NULL,
      direction text NOT NULL,
      user_id text,
      requested_micro bigint NOT NULL,
      amount_micro bigint NOT NULL,
      status text NOT NULL,
      tx_hash text,
      reason text,
      due_at timestamptz,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      PRIMARY KEY (venue, transfer_id)
    );
    CREATE INDEX simulated_venue_transfers_due ON simulated_venue_transfers (venue, pool_id, due_at) WHERE due_at IS NOT NULL;
    CREATE TABLE simulated_venue_locks (
      venue text NOT NULL,
      position_id text NOT NULL,
      pool_id text NOT NULL,
      amount_micro bigint NOT NULL,
      status text NOT NULL,
      pnl_micro bigint,
      PRIMARY KEY (venue, position_id)
    );`,
  },
];

export interface TransferRow {
  transfer_id: string;
  pool_id: string;
  direction: string;
  user_id: string | null;
  requested_micro: string;
  amount_micro: string;
  status: string;
  tx_hash: string | null;
  reason: string | null;
  due_at: Date | null;
  seq: string;
}

interface LockRow {
  position_id: string;
  pool_id: string;
  amount_micro: string;
  status: MarginLock['status'];
  pnl_micro: string | null;
}

export type Transfer = ChainTransfer | BridgeTransfer;

/** One venue's transfers as rows: the chain's (spot) or the bridge's (perp). */
export interface Rail<T extends Transfer, S extends SimulatedTransfers<T>> {
  venue: VenueName;
  of(row: TransferRow): T;
  /** direction, user_id, requested_micro, amount_micro, status, tx_hash, reason */
  columns(t: T): [string, string | null, number, number, string, string | null, string | null];
  make(book: PoolBook, transfers: Map<string, T>, waiting: Due[]): S;
}

export const chainRail = (settlementMs: number, fail: FailRule): Rail<ChainTransfer, SimulatedChain> => ({
  venue: 'spot',
  of: (r) => ({
    transferId: r.transfer_id,
    direction: r.direction as ChainTransfer['direction'],
    userId: r.user_id!,
    poolId: r.pool_id,
    amountMicro: Number(r.amount_micro),
    status: r.status as ChainTransfer['status'],
    txHash: r.tx_hash,
    reason: r.reason,
  }),
  columns: (t) => [t.direction, t.userId, t.amountMicro, t.amountMicro, t.status, t.txHash, t.reason],
  make: (book, transfers, waiting) => new SimulatedChain(book, settlementMs, fail, transfers, waiting),
});

export const bridgeRail = (delays: BridgeDelays, fail: FailRule): Rail<BridgeTransfer, SimulatedBridge> => ({
  venue: 'perp',
  of: (r) => ({
    transferId: r.transfer_id,
    direction: r.direction as BridgeTransfer['direction'],
    poolId: r.pool_id,
    requestedMicro: Number(r.requested_micro),
    amountMicro: Number(r.amount_micro),
    status: r.status as BridgeTransfer['status'],
    bridgeTransactionId: r.tx_hash,
    reason: r.reason,
  }),
  columns: (t) => [t.direction, null, t.requestedMicro, t.amountMicro, t.status, t.bridgeTransactionId, t.reason],
  make: (book, transfers, waiting) => new SimulatedBridge(book, delays, fail, transfers, waiting),
});

const lockOf = (r: LockRow): MarginLock => ({
  positionId: r.position_id,
  poolId: r.pool_id,
  amountMicro: Number(r.amount_micro),
  status: r.status,
  pnlMicro: r.pnl_micro === null ? null : Number(r.pnl_micro),
});

/** Another process used the id first, between this call's read and its insert: the call runs again. */
export class IdTaken extends Error {}

/** The records a call names, loaded with its pool's. */
export interface Wanted {
  transferId?: string;
  positionId?: string;
}

/** What a call loaded, as it was: a record written back only when the call changed it. */
const snapshot = (value: unknown, dueAt: number | null = null): string => JSON.stringify([value, dueAt]);

export type Figures = Record<'equity_micro' | 'margin_in_use_micro' | 'outgoing_micro', string | null>;
export const entryOf = (r: Figures | undefined): PoolEntry => ({
  equity: Number(r?.equity_micro ?? 0),
  marginInUse: Number(r?.margin_in_use_micro ?? 0),
  outgoing: Number(r?.outgoing_micro ?? 0),
});

/** One pool's records as a call loaded them, in the simulation's classes, and how they were. */
export interface Loaded<S> {
  poolId: string;
  entry: PoolEntry;
  book: PoolBook;
  transfers: S;
  /** each record's snapshot at load: written back only when it differs */
  before: Map<string, string>;
}

/**
 * The pool's row locked (created when new), its transfers due by `now` and the records the call
 * names, in the simulation's classes.
 */
export async function loadPool<R extends Transfer, S extends SimulatedTransfers<R>>(
  client: PoolClient,
  rail: Rail<R, S>,
  poolId: string,
  wanted: Wanted,
  now: number,
): Promise<Loaded<S>> {
  const { venue } = rail;
  // Created when new, then locked: an existing row is locked without being written (no new row version per call).
  await client.query('INSERT INTO simulated_venue_pools (venue, pool_id) VALUES ($1, $2) ON CONFLICT (venue, pool_id) DO NOTHING', [venue, poolId]);
  const { rows: entryRows } = await client.query<Record<'equity_micro' | 'margin_in_use_micro' | 'outgoing_micro', string>>(
    'SELECT equity_micro, margin_in_use_micro, outgoing_micro FROM simulated_venue_pools WHERE venue = $1 AND pool_id = $2 FOR UPDATE',
    [venue, poolId],
  );
  const entry = entryOf(entryRows[0]);
  const { rows: transferRows } = await client.query<TransferRow>(
    `SELECT * FROM simulated_venue_transfers WHERE venue = $1 AND ((pool_id = $2 AND due_at <= $3) OR transfer_id = $4) ORDER BY due_at, seq`,
    [venue, poolId, new Date(now), wanted.transferId ?? null],
  );
  const { rows: lockRows } = wanted.positionId
    ? await client.query<LockRow>('SELECT * FROM simulated_venue_locks WHERE venue = $1 AND position_id = $2', [venue, wanted.positionId])
    : { rows: [] };
  const book = new PoolBook(new Map([[poolId, entry]]), new Map(lockRows.map((r) => [r.position_id, lockOf(r)])));
  // Another pool's transfer (an id reused for another pool: a conflict) is read, never settled here.
  const waiting = transferRows
    .filter((r) => r.due_at !== null && r.pool_id === poolId)
    .map((r) => ({ transferId: r.transfer_id, at: r.due_at!.getTime(), seq: Number(r.seq) }));
  const transfers = rail.make(book, new Map(transferRows.map((r) => [r.transfer_id, rail.of(r)])), waiting);
  const before = new Map<string, string>([['pool', snapshot(entry)]]);
  for (const [id, t] of transfers.transfers) before.set(`t:${id}`, snapshot(t, transfers.dueAt(id)));
  for (const [id, l] of book.locks) before.set(`l:${id}`, snapshot(l));
  return { poolId, entry, book, transfers, before };
}

/** Writes back what the call changed; IdTaken when another process inserted one of its new ids first. */
export async function writeBack<R extends Transfer, S extends SimulatedTransfers<R>>(client: PoolClient, rail: Rail<R, S>, loaded: Loaded<S>): Promise<void> {
  const { venue } = rail;
  const { poolId, entry, book, transfers, before } = loaded;
  if (snapshot(entry) !== before.get('pool')) {
    await client.query('UPDATE simulated_venue_pools SET equity_micro = $3, margin_in_use_micro = $4, outgoing_micro = $5 WHERE venue = $1 AND pool_id = $2', [
      venue,
      poolId,
      entry.equity,
      entry.marginInUse,
      entry.outgoing,
    ]);
  }
  for (const [id, t] of transfers.transfers) {
    const dueAt = transfers.dueAt(id);
    const was = before.get(`t:${id}`);
    if (was === snapshot(t, dueAt)) continue;
    const { rowCount } = await client.query(
      was === undefined
        ? `INSERT INTO simulated_venue_transfers (venue, transfer_id, pool_id, direction, user_id, requested_micro, amount_micro, status, tx_hash, reason, due_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING`
        : `UPDATE simulated_venue_transfers SET direction = $4, user_id = $5, requested_micro = $6, amount_micro = $7, status = $8, tx_hash = $9, reason = $10, due_at = $11
           WHERE venue = $1 AND transfer_id = $2 AND pool_id = $3`,
      [venue, id, t.poolId, ...rail.columns(t), dueAt === null ? null : new Date(dueAt)],
    );
    if (rowCount === 0) throw new IdTaken();
  }
  for (const [id, l] of book.locks) {
    const was = before.get(`l:${id}`);
    if (was === snapshot(l)) continue;
    const { rowCount } = await client.query(
      was === undefined
        ? 'INSERT INTO simulated_venue_locks (venue, position_id, pool_id, amount_micro, status, pnl_micro) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING'
        : 'UPDATE simulated_venue_locks SET amount_micro = $4, status = $5, pnl_micro = $6 WHERE venue = $1 AND position_id = $2 AND pool_id = $3',
      [venue, id, l.poolId, l.amountMicro, l.status, l.pnlMicro],
    );
    if (rowCount === 0) throw new IdTaken();
  }
}
