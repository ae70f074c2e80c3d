// A clock the test moves by hand and simulated venues on it, with delays short enough to read: in
// memory, or with their books in a PostgreSQL database of the test file's own.
import type { Clock } from '../../../infra/clock.ts';
import { createPool, migrate, type Pool } from '../../../infra/db.ts';
import type { Venues } from '../../../infra/venues/port.ts';
import { createInMemoryPrices } from '../../../infra/venues/prices.ts';
import { createSimulatedVenues, type SimulatedVenuesOptions } from '../../../infra/venues/simulated.ts';
import { createStoredSimulatedVenues } from '../../../infra/venues/stored.ts';
import { simulatedBookMigrations } from '../../../infra/venues/stored-books.ts';
import { freshDatabase } from '../../support/db.ts';

export interface ManualClock extends Clock {
  advance(ms: number): void;
}

export function manualClock(start = '2025-01-02T03:04:05.000Z'): ManualClock {
  let t = Date.parse(start);
  return {
    now: () => new Date(t),
    advance(ms) {
      t += ms;
    },
  };
}

export const CHAIN_MS = 1_000;
export const DEPOSIT_MS = 2_000;
export const RECLAIM_MS = 3_000;

/** USD → micro-USD for readable literals (whole and half dollars only, exact). */
export const usd = (dollars: number): number => dollars * 1_000_000;

export function simulated(options: Partial<SimulatedVenuesOptions> = {}): { clock: ManualClock; venues: Venues } {
  const clock = manualClock();
  const venues = createSimulatedVenues({
    clock,
    prices: createInMemoryPrices(),
    chainSettlementMs: CHAIN_MS,
    bridgeDelays: { depositMs: DEPOSIT_MS, reclaimMs: RECLAIM_MS },
    ...options,
  });
  return { clock, venues };
}

/** A database holding the simulated venues' books, for one test file. */
export interface BookDatabase {
  url: string;
  /** venues on the books, from empty books on (every table emptied) */
  fresh(options?: Partial<SimulatedVenuesOptions>): Promise<{ clock: ManualClock; venues: Venues }>;
  /** venues on the same books through a pool of their own: another process, or the same one restarted */
  process(clock: ManualClock, options?: Partial<SimulatedVenuesOptions>): { venues: Venues; pool: Pool };
  drop(): Promise<void>;
}

export async function bookDatabase(): Promise<BookDatabase> {
  const db = await freshDatabase('venue');
  await migrate(db.pool, simulatedBookMigrations);
  const pools: Pool[] = [];
  const process = (clock: ManualClock, options: Partial<SimulatedVenuesOptions> = {}) => {
    const pool = createPool(db.url, 4);
    pools.push(pool);
    const venues = createStoredSimulatedVenues({
      pool,
      clock,
      prices: createInMemoryPrices(),
      chainSettlementMs: CHAIN_MS,
      bridgeDelays: { depositMs: DEPOSIT_MS, reclaimMs: RECLAIM_MS },
      ...options,
    });
    return { venues, pool };
  };
  return {
    url: db.url,
    async fresh(options = {}) {
      await db.pool.query('TRUNCATE simulated_venue_pools, simulated_venue_transfers, simulated_venue_locks');
      const clock = manualClock();
      return { clock, venues: process(clock, options).venues };
    },
    process,
    async drop() {
      await Promise.all(pools.splice(0).map((p) => (p.ended ? undefined : p.end())));
      await db.drop();
    },
  };
}

let funding = 0;

/** A pool funded at the perp venue: one bridge deposit, confirmed. */
export async function fundPerp(venues: Venues, clock: ManualClock, poolId: string, amountMicro: number): Promise<void> {
  const started = await venues.perp.bridge.start({ transferId: `fund-${++funding}`, direction: 'deposit', poolId, amountMicro });
  if (started.status !== 'BRIDGING') throw new Error(`funding ${poolId} did not start: ${started.status}`);
  clock.advance(DEPOSIT_MS);
  const done = await venues.perp.bridge.status(started.transferId);
  if (done?.status !== 'CONFIRMED') throw new Error(`funding ${poolId} did not confirm: ${done?.status}`);
}

/** A pool funded at the spot venue: one chain deposit, confirmed. */
export async function fundSpot(venues: Venues, clock: ManualClock, poolId: string, amountMicro: number): Promise<void> {
  const sent = await venues.spot.chain.submit({ transferId: `fund-${++funding}`, direction: 'deposit', userId: 'u1', poolId, amountMicro });
  if (sent.status !== 'PENDING') throw new Error(`funding ${poolId} was not sent: ${sent.status}`);
  clock.advance(CHAIN_MS);
  const done = await venues.spot.chain.status(sent.transferId);
  if (done?.status !== 'CONFIRMED') throw new Error(`funding ${poolId} did not confirm: ${done?.status}`);
}
