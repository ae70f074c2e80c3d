// The simulated venues with their books in PostgreSQL: the service's venue when VENUE_URL is unset.
// The simulation is simulated.ts's own (its chain, bridge and books decide every call); here each
// call runs over the rows of the one pool it touches, in one transaction holding that pool's row
// lock, and writes them back. So the books outlive the process (a restart finds every pool's money
// and every transfer), several processes share one venue (a pool's calls take turns, other pools'
// go on), and a transfer that became due while no process ran settles at the first call after, from
// its stored due time. Idempotent by id as in memory: transfer and position ids are primary keys,
// and a first use of an id that races another process's is run again, then finds it.
import { inTransaction, type Migration, type Pool, type PoolClient } from '../db.ts';
import { PoolBook, type PoolEntry } from './book.ts';
import { SimulatedBridge, type BridgeDelays } from './bridge.ts';
import { SimulatedChain } from './chain.ts';
import { VenueConflictError, VenueRefusedError, VenueUnavailableError, type VenueName } from './errors.ts';
import type { BridgeTransfer, ChainTransfer, MarginLock, VenueAccount, Venues } from './port.ts';
import type { Due, FailRule, SimulatedTransfers } from './settlements.ts';
import { delaysOf, withFault, type SimulatedVenuesOptions, type VenueOperation } from './simulated.ts';

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

export interface StoredSimulatedVenuesOptions extends SimulatedVenuesOptions {
  pool: Pool;
}

interface TransferRow {
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

type Transfer = ChainTransfer | BridgeTransfer;

/** One venue's transfers as rows: the chain's (spot) or the bridge's (perp). */
interface Rail<T extends Transfer, S extends SimulatedTransfers<T>> {
  venue: VenueName;
  of(row: TransferRow): T;
  /** direction, user_id, requested_micro, amount_micro, status, tx_hash, reason */
  columns(t: T): [string, string | null, number, number, string, string | null, string | null];
  make(book: PoolBook, transfers: Map<string, T>, waiting: Due[]): S;
}

const chainRail = (settlementMs: number, fail: FailRule): Rail<ChainTransfer, SimulatedChain> => ({
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

const bridgeRail = (delays: BridgeDelays, fail: FailRule): Rail<BridgeTransfer, SimulatedBridge> => ({
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
class IdTaken extends Error {}

/** A call over one pool's loaded records: the venue's transfers and the pool's book. */
type Run<T, S> = (transfers: S, book: PoolBook) => T;

interface Wanted {
  transferId?: string;
  positionId?: string;
}

/** What a call loaded, as it was: a record written back only when the call changed it. */
const snapshot = (value: unknown, dueAt: number | null = null): string => JSON.stringify([value, dueAt]);

/**
 * The pool's row locked (created when new), its transfers due by `now` and the records the call
 * names loaded; what became final applied, the call run, everything it changed written back.
 */
async function inPoolOnce<T, R extends Transfer, S extends SimulatedTransfers<R>>(client: PoolClient, rail: Rail<R, S>, poolId: string, wanted: Wanted, now: number, run: Run<T, S>): Promise<T> {
  const { venue } = rail;
  const { rows: entryRows } = await client.query<Record<'equity_micro' | 'margin_in_use_micro' | 'outgoing_micro', string>>(
    `INSERT INTO simulated_venue_pools (venue, pool_id) VALUES ($1, $2)
     ON CONFLICT (venue, pool_id) DO UPDATE SET pool_id = EXCLUDED.pool_id
     RETURNING equity_micro, margin_in_use_micro, outgoing_micro`,
    [venue, poolId],
  );
  const entry: PoolEntry = { equity: Number(entryRows[0]!.equity_micro), marginInUse: Number(entryRows[0]!.margin_in_use_micro), outgoing: Number(entryRows[0]!.outgoing_micro) };
  const { rows: transferRows } = await client.query<TransferRow>(
    `SELECT * FROM simulated_venue_transfers WHERE venue = $1 AND ((pool_id = $2 AND due_at <= $3) OR transfer_id = $4) ORDER BY due_at, seq`,
    [venue, poolId, new Date(now), wanted.transferId ?? null],
  );
  const { rows: lockRows } = wanted.positionId
    ? await client.query<LockRow>('SELECT * FROM simulated_venue_locks WHERE venue = $1 AND position_id = $2', [venue, wanted.positionId])
    : { rows: [] };

  const book = new PoolBook(new Map([[poolId, entry]]), new Map(lockRows.map((r) => [r.position_id, lockOf(r)])));
  // Another pool's transfer (an id reused for another pool: a conflict) is read, never settled here.
  const waiting = transferRows.filter((r) => r.due_at !== null && r.pool_id === poolId).map((r) => ({ transferId: r.transfer_id, at: r.due_at!.getTime(), seq: Number(r.seq) }));
  const transfers = rail.make(book, new Map(transferRows.map((r) => [r.transfer_id, rail.of(r)])), waiting);
  const before = new Map<string, string>([[`pool`, snapshot(entry)]]);
  for (const [id, t] of transfers.transfers) before.set(`t:${id}`, snapshot(t, transfers.dueAt(id)));
  for (const [id, l] of book.locks) before.set(`l:${id}`, snapshot(l));

  transfers.settle(now);
  const answer = run(transfers, book);

  if (snapshot(entry) !== before.get('pool')) {
    await client.query('UPDATE simulated_venue_pools SET equity_micro = $3, margin_in_use_micro = $4, outgoing_micro = $5 WHERE venue = $1 AND pool_id = $2', [
      venue, poolId, entry.equity, entry.marginInUse, entry.outgoing,
    ]);
  }
  for (const [id, t] of transfers.transfers) {
    const dueAt = transfers.dueAt(id);
    const was = before.get(`t:${id}`);
    if (was === snapshot(t, dueAt)) continue;
    const values = [venue, id, t.poolId, ...rail.columns(t), dueAt === null ? null : new Date(dueAt)];
    if (was !== undefined) {
      await client.query(
        `UPDATE simulated_venue_transfers SET direction = $4, user_id = $5, requested_micro = $6, amount_micro = $7, status = $8, tx_hash = $9, reason = $10, due_at = $11
         WHERE venue = $1 AND transfer_id = $2 AND pool_id = $3`,
        values,
      );
      continue;
    }
    const { rowCount } = await client.query(
      `INSERT INTO simulated_venue_transfers (venue, transfer_id, pool_id, direction, user_id, requested_micro, amount_micro, status, tx_hash, reason, due_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING`,
      values,
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
  return answer;
}

/** One call over one pool, in one transaction: a refusal or a conflict changes nothing (rolled back). */
async function inPool<T, R extends Transfer, S extends SimulatedTransfers<R>>(db: Pool, rail: Rail<R, S>, poolId: string, wanted: Wanted, now: number, run: Run<T, S>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await inTransaction(db, (client) => inPoolOnce(client, rail, poolId, wanted, now, run));
    } catch (err) {
      // Run again, it then reads the other process's record; a second race for one id is not expected.
      if (!(err instanceof IdTaken) || attempt === 3) throw err;
    }
  }
}

/** Applies what became final by `now` in the pools that have any, in pool id order. */
async function settleDue<R extends Transfer, S extends SimulatedTransfers<R>>(db: Pool, rail: Rail<R, S>, now: number, poolId: string | null): Promise<boolean> {
  const { rows } = await db.query<{ pool_id: string }>(
    `SELECT DISTINCT pool_id FROM simulated_venue_transfers WHERE venue = $1 AND due_at <= $2 AND ($3::text IS NULL OR pool_id = $3) ORDER BY pool_id`,
    [rail.venue, new Date(now), poolId],
  );
  for (const r of rows) await inPool(db, rail, r.pool_id, {}, now, () => undefined);
  return rows.length > 0;
}

type Figures = Record<'equity_micro' | 'margin_in_use_micro' | 'outgoing_micro', string | null>;
const entryOf = (r: Figures | undefined): PoolEntry => ({ equity: Number(r?.equity_micro ?? 0), marginInUse: Number(r?.margin_in_use_micro ?? 0), outgoing: Number(r?.outgoing_micro ?? 0) });

function storedAccount<R extends Transfer, S extends SimulatedTransfers<R>>(db: Pool, rail: Rail<R, S>, call: Caller): VenueAccount {
  const { venue } = rail;
  return {
    poolFigures: (poolId) =>
      call(venue, 'poolFigures', poolId, async (now) => {
        await settleDue(db, rail, now, poolId);
        const { rows } = await db.query<Figures>('SELECT * FROM simulated_venue_pools WHERE venue = $1 AND pool_id = $2', [venue, poolId]);
        return new PoolBook(new Map([[poolId, entryOf(rows[0])]])).figures(poolId);
      }),
    accountFigures: () =>
      call(venue, 'accountFigures', null, async (now) => {
        await settleDue(db, rail, now, null);
        const { rows } = await db.query<Figures & { free_micro: string | null }>(
          `SELECT sum(equity_micro) AS equity_micro, sum(margin_in_use_micro) AS margin_in_use_micro, sum(outgoing_micro) AS outgoing_micro,
             sum(GREATEST(0, equity_micro - margin_in_use_micro)) AS free_micro FROM simulated_venue_pools WHERE venue = $1`,
          [venue],
        );
        const e = entryOf(rows[0]);
        return { equityMicro: e.equity, marginInUseMicro: e.marginInUse, freeMicro: Number(rows[0]?.free_micro ?? 0), outgoingMicro: e.outgoing };
      }),
    lockMargin: (request) => call(venue, 'lockMargin', request.positionId, (now) => inPool(db, rail, request.poolId, { positionId: request.positionId }, now, (_, book) => book.lock(request))),
    releaseMargin: (request) => call(venue, 'releaseMargin', request.positionId, (now) => inPool(db, rail, request.poolId, { positionId: request.positionId }, now, (_, book) => book.release(request))),
  };
}

/** A transfer's record: as stored, or with what became final by `now` applied first. */
async function storedStatus<R extends Transfer, S extends SimulatedTransfers<R>>(db: Pool, rail: Rail<R, S>, transferId: string, now: number): Promise<R | null> {
  const { rows } = await db.query<TransferRow>('SELECT * FROM simulated_venue_transfers WHERE venue = $1 AND transfer_id = $2', [rail.venue, transferId]);
  const row = rows[0];
  if (!row) return null;
  if (row.due_at === null || row.due_at.getTime() > now) return rail.of(row);
  return inPool(db, rail, row.pool_id, { transferId }, now, (transfers) => transfers.status(transferId)!);
}

type Caller = <T>(venue: VenueName, operation: VenueOperation, key: string | null, effect: (now: number) => Promise<T>) => Promise<T>;

export function createStoredSimulatedVenues(options: StoredSimulatedVenuesOptions): Venues {
  const { pool: db } = options;
  const fail = options.failTransfer ?? (() => null);
  const delays = delaysOf(options);
  const chain = chainRail(delays.chainMs, fail);
  const bridge = bridgeRail(delays.bridge, fail);
  // PostgreSQL out of reach is the venue out of reach: the caller repeats the call with the same id.
  const call: Caller = (venue, operation, key, effect) =>
    withFault(options.fault, { venue, operation, key }, async () => {
      try {
        return await effect(options.clock.now().getTime());
      } catch (err) {
        if (err instanceof VenueRefusedError || err instanceof VenueConflictError) throw err;
        throw new VenueUnavailableError(venue, operation, { cause: err });
      }
    });
  return {
    spot: {
      chain: {
        submit: (request) =>
          call('spot', 'submit', request.transferId, (now) => inPool(db, chain, request.poolId, { transferId: request.transferId }, now, (transfers) => transfers.submit(request, now))),
        status: (transferId) => call('spot', 'status', transferId, (now) => storedStatus(db, chain, transferId, now)),
      },
      account: storedAccount(db, chain, call),
    },
    perp: {
      bridge: {
        start: (request) =>
          call('perp', 'start', request.transferId, (now) => inPool(db, bridge, request.poolId, { transferId: request.transferId }, now, (transfers) => transfers.start(request, now))),
        status: (transferId) => call('perp', 'status', transferId, (now) => storedStatus(db, bridge, transferId, now)),
      },
      account: storedAccount(db, bridge, call),
    },
    prices: options.prices,
  };
}
