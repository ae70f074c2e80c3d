// The simulated venues with their books in PostgreSQL: the service's venue when VENUE_URL is unset.
// The simulation is simulated.ts's own (its chain, bridge and books decide every call); here each
// call runs over the rows of the one pool it touches, in one transaction holding that pool's row
// lock, and writes them back. So the books outlive the process (a restart finds every pool's money
// and every transfer), several processes share one venue (a pool's calls take turns, other pools'
// go on), and a transfer that became due while no process ran settles at the first call after, from
// its stored due time. Idempotent by id as in memory: transfer and position ids are primary keys,
// and a first use of an id that races another process's is run again, then finds it.
import { inTransaction, type Pool, type PoolClient } from '../db.ts';
import { PoolBook } from './book.ts';
import { VenueConflictError, VenueRefusedError, VenueUnavailableError, type VenueName } from './errors.ts';
import type { BridgeRequest, ChainTransferRequest, VenueAccount, Venues } from './port.ts';
import type { SimulatedTransfers } from './settlements.ts';
import { delaysOf, withFault, type SimulatedVenuesOptions, type VenueOperation } from './simulated.ts';
import {
  bridgeRail,
  chainRail,
  entryOf,
  IdTaken,
  loadPool,
  writeBack,
  type Figures,
  type Rail,
  type Transfer,
  type TransferRow,
  type Wanted,
} from './stored-books.ts';

export interface StoredSimulatedVenuesOptions extends SimulatedVenuesOptions {
  pool: Pool;
}

/** A call over one pool's loaded records: the venue's transfers and the pool's book. */
type Run<T, S> = (transfers: S, book: PoolBook) => T;

/** The call over its pool's rows: what became final by `now` applied, the call run, its changes written back. */
async function inPoolOnce<T, R extends Transfer, S extends SimulatedTransfers<R>>(
  client: PoolClient,
  rail: Rail<R, S>,
  poolId: string,
  wanted: Wanted,
  now: number,
  run: Run<T, S>,
): Promise<T> {
  const loaded = await loadPool(client, rail, poolId, wanted, now);
  loaded.transfers.settle(now);
  const answer = run(loaded.transfers, loaded.book);
  await writeBack(client, rail, loaded);
  return answer;
}

/** One call over one pool, in one transaction: a refusal or a conflict changes nothing (rolled back). */
async function inPool<T, R extends Transfer, S extends SimulatedTransfers<R>>(
  db: Pool,
  rail: Rail<R, S>,
  poolId: string,
  wanted: Wanted,
  now: number,
  run: Run<T, S>,
): Promise<T> {
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
async function settleDue<R extends Transfer, S extends SimulatedTransfers<R>>(db: Pool, rail: Rail<R, S>, now: number, poolId: string | null): Promise<void> {
  const { rows } = await db.query<{ pool_id: string }>(
    `SELECT DISTINCT pool_id FROM simulated_venue_transfers WHERE venue = $1 AND due_at <= $2 AND ($3::text IS NULL OR pool_id = $3) ORDER BY pool_id`,
    [rail.venue, new Date(now), poolId],
  );
  for (const r of rows) await inPool(db, rail, r.pool_id, {}, now, () => undefined);
}

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
    lockMargin: (request) =>
      call(venue, 'lockMargin', request.positionId, (now) =>
        inPool(db, rail, request.poolId, { positionId: request.positionId }, now, (_, book) => book.lock(request)),
      ),
    releaseMargin: (request) =>
      call(venue, 'releaseMargin', request.positionId, (now) =>
        inPool(db, rail, request.poolId, { positionId: request.positionId }, now, (_, book) => book.release(request)),
      ),
  };
}

/** A transfer's record: as stored, or with what became final by `now` applied first. */
async function storedStatus<R extends Transfer, S extends SimulatedTransfers<R>>(
  db: Pool,
  rail: Rail<R, S>,
  transferId: string,
  now: number,
): Promise<R | null> {
  const { rows } = await db.query<TransferRow>('SELECT * FROM simulated_venue_transfers WHERE venue = $1 AND transfer_id = $2', [rail.venue, transferId]);
  const row = rows[0];
  if (!row) return null;
  if (row.due_at === null || row.due_at.getTime() > now) return rail.of(row);
  return inPool(db, rail, row.pool_id, { transferId }, now, (transfers) => transfers.status(transferId)!);
}

type Caller = <T>(venue: VenueName, operation: VenueOperation, key: string | null, effect: (now: number) => Promise<T>) => Promise<T>;

/**
 * A rail's transfers as the port has them: the call that moves money (`operation`: the chain's
 * submit, the bridge's start), over the request's pool, and the status of one transfer.
 */
function storedTransfers<R extends Transfer, S extends SimulatedTransfers<R>, Q extends { transferId: string; poolId: string }>(
  db: Pool,
  rail: Rail<R, S>,
  call: Caller,
  operation: 'submit' | 'start',
  move: (transfers: S, request: Q, now: number) => R,
) {
  const { venue } = rail;
  return {
    move: (request: Q): Promise<R> =>
      call(venue, operation, request.transferId, (now) =>
        inPool(db, rail, request.poolId, { transferId: request.transferId }, now, (transfers) => move(transfers, request, now)),
      ),
    status: (transferId: string): Promise<R | null> => call(venue, 'status', transferId, (now) => storedStatus(db, rail, transferId, now)),
  };
}

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
  const spot = storedTransfers(db, chain, call, 'submit', (transfers, request: ChainTransferRequest, now) => transfers.submit(request, now));
  const perp = storedTransfers(db, bridge, call, 'start', (transfers, request: BridgeRequest, now) => transfers.start(request, now));
  return {
    spot: { chain: { submit: spot.move, status: spot.status }, account: storedAccount(db, chain, call) },
    perp: { bridge: { start: perp.move, status: perp.status }, account: storedAccount(db, bridge, call) },
    prices: options.prices,
  };
}
