// A clock the test moves by hand and simulated venues on it, with delays short enough to read.
import type { Clock } from '../../../infra/clock.ts';
import type { Venues } from '../../../infra/venues/port.ts';
import { createInMemoryPrices } from '../../../infra/venues/prices.ts';
import { createSimulatedVenues, type SimulatedVenuesOptions } from '../../../infra/venues/simulated.ts';

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
