// The simulated venues, in process: a spot venue reached by chain transfers and a perp venue with
// one shared account reached through a bridge. Deterministic: time is the given clock's (nothing
// runs on a timer; each call first applies what became final by now), failures come from the given
// rule, outages and lost answers from the given fault rule.
//
// Here the state lives in this process's memory and is gone on restart: for tests that move the
// clock by hand. The service runs the same simulation with its books in PostgreSQL (stored.ts).
import type { Clock } from '../clock.ts';
import { PoolBook } from './book.ts';
import { SimulatedBridge, type BridgeDelays } from './bridge.ts';
import { SimulatedChain } from './chain.ts';
import { VenueUnavailableError, type VenueName } from './errors.ts';
import type { PriceSource, VenueAccount, Venues } from './port.ts';
import type { FailRule } from './settlements.ts';

export type VenueOperation = 'submit' | 'status' | 'start' | 'poolFigures' | 'accountFigures' | 'lockMargin' | 'releaseMargin';

export interface VenueCall {
  venue: VenueName;
  operation: VenueOperation;
  /** the call's transfer, position or pool id; null for accountFigures */
  key: string | null;
}

/**
 * `unavailable`: the venue is not reached, nothing happens. `reply-lost`: the venue handles the
 * call, then its answer (success or refusal) is lost, as on a time-out: the caller sees the same
 * VenueUnavailableError.
 */
export type Fault = 'unavailable' | 'reply-lost';

export interface SimulatedVenuesOptions {
  clock: Clock;
  prices: PriceSource;
  /** ms from submit until a chain transfer is final (default 2 000) */
  chainSettlementMs?: number;
  /** ms a bridge transfer stays BRIDGING, per direction (defaults 5 000 in, 10 000 out) */
  bridgeDelays?: Partial<BridgeDelays>;
  /** which transfers end FAILED, with the reason; default none */
  failTransfer?: FailRule;
  /** which calls meet an outage or lose their answer; default none */
  fault?: (call: VenueCall) => Fault | null;
}

export const SIMULATED_DEFAULTS = { chainSettlementMs: 2_000, depositMs: 5_000, reclaimMs: 10_000 } as const;

function delay(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a whole number of ms, at least 0`);
  return value;
}

/** The settlement delays of the options, checked, with their defaults. */
export function delaysOf(options: Pick<SimulatedVenuesOptions, 'chainSettlementMs' | 'bridgeDelays'>): { chainMs: number; bridge: BridgeDelays } {
  return {
    chainMs: delay('chainSettlementMs', options.chainSettlementMs ?? SIMULATED_DEFAULTS.chainSettlementMs),
    bridge: {
      depositMs: delay('bridgeDelays.depositMs', options.bridgeDelays?.depositMs ?? SIMULATED_DEFAULTS.depositMs),
      reclaimMs: delay('bridgeDelays.reclaimMs', options.bridgeDelays?.reclaimMs ?? SIMULATED_DEFAULTS.reclaimMs),
    },
  };
}

/** One venue call under the fault rule: not reached, or made and its answer (or refusal) lost. */
export async function withFault<T>(fault: SimulatedVenuesOptions['fault'], call: VenueCall, effect: () => T | Promise<T>): Promise<T> {
  const kind = fault?.(call) ?? null;
  if (kind === 'unavailable') throw new VenueUnavailableError(call.venue, call.operation);
  if (kind !== 'reply-lost') return effect();
  try {
    await effect();
  } catch {
    // a refusal is lost like any other answer
  }
  throw new VenueUnavailableError(call.venue, call.operation);
}

export function createSimulatedVenues(options: SimulatedVenuesOptions): Venues {
  const fail = options.failTransfer ?? (() => null);
  const delays = delaysOf(options);
  const spotBook = new PoolBook();
  const chain = new SimulatedChain(spotBook, delays.chainMs, fail);
  const perpBook = new PoolBook();
  const bridge = new SimulatedBridge(perpBook, delays.bridge, fail);

  /** One venue call: the fault rule, what became final by now, then the call itself, atomically. */
  const caller =
    (venue: VenueName, settle: (now: number) => void) =>
    <T>(operation: VenueOperation, key: string | null, effect: (now: number) => T): Promise<T> =>
      withFault(options.fault, { venue, operation, key }, () => {
        const now = options.clock.now().getTime();
        settle(now);
        return effect(now);
      });
  const spot = caller('spot', (now) => chain.settle(now));
  const perp = caller('perp', (now) => bridge.settle(now));

  const account = (run: typeof spot, book: PoolBook): VenueAccount => ({
    poolFigures: (poolId) => run('poolFigures', poolId, () => book.figures(poolId)),
    accountFigures: () => run('accountFigures', null, () => book.totals()),
    lockMargin: (request) => run('lockMargin', request.positionId, () => book.lock(request)),
    releaseMargin: (request) => run('releaseMargin', request.positionId, () => book.release(request)),
  });

  return {
    spot: {
      chain: {
        submit: (request) => spot('submit', request.transferId, (now) => chain.submit(request, now)),
        status: (transferId) => spot('status', transferId, () => chain.status(transferId)),
      },
      account: account(spot, spotBook),
    },
    perp: {
      bridge: {
        start: (request) => perp('start', request.transferId, (now) => bridge.start(request, now)),
        status: (transferId) => perp('status', transferId, () => bridge.status(transferId)),
      },
      account: account(perp, perpBook),
    },
    prices: options.prices,
  };
}
