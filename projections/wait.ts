import type { Redis } from 'ioredis';
import type { Pool } from '../infra/db.ts';
import { confirmedSubscription, prefixedChannel, scriptCommand } from '../infra/redis.ts';
import { comparePositions, START, type Position } from '../infra/eventstore/port.ts';
import { readCheckpoints } from './checkpoints.ts';
import type { ProjectionRunner } from './runner.ts';

/** The channel a projection runner's committed batches are announced on (under the Redis key prefix). */
const APPLIED_CHANNEL = 'projections-applied';

/** A runner committed a batch: API processes without projections check their waits now, not at their next poll. */
export function announceApplied(redis: Redis, onerror: (error: Error) => void): void {
  redis.publish(prefixedChannel(redis, APPLIED_CHANNEL), '').catch(onerror);
}

/** The announcements heard by a process without projections (a connection of its own, subscribed). */
export interface AppliedNotices {
  /** whether announcements are heard now: Redis confirmed the subscription and the connection has not closed since */
  live(): boolean;
  /** `listener` on every announcement (and when the subscription is made); answers its removal */
  on(listener: () => void): () => void;
  close(): void;
}

export function listenApplied(redis: Redis, onerror: (error: Error) => void): AppliedNotices {
  const listeners = new Set<() => void>();
  const tell = () => {
    for (const listener of listeners) listener();
  };
  // confirmed: what was missed meanwhile is checked then; lost: a wait checks at once and polls while nothing is heard
  const subscription = confirmedSubscription(redis, prefixedChannel(redis, APPLIED_CHANNEL), { message: tell, confirmed: tell, lost: tell }, onerror);
  return {
    live: subscription.live,
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      listeners.clear();
      subscription.close();
    },
  };
}

/** How often a process without projections reads the checkpoints while a write waits: announcements heard, and not. */
export const CHECK_EVERY_MS = { heard: 250, unheard: 20 };

/**
 * Read-your-writes: wait (bounded) until every read model has applied `position`. With a runner
 * in this process its commits wake the wait; otherwise (API-only process) the checkpoints table is
 * read once for all the writes waiting, when a runner elsewhere announces a batch (`notices`) and
 * every CHECK_EVERY_MS in case an announcement is lost. On time-out the answer goes out anyway
 * (false); a later query shows the effect.
 */
export function createReadYourWrites(options: {
  runner?: ProjectionRunner;
  pool: Pool;
  projectorNames: string[];
  timeoutMs: number;
  notices?: AppliedNotices;
  checkEveryMs?: typeof CHECK_EVERY_MS;
  /** a failed read of the checkpoints (the waits go on: the next announcement or poll reads again) */
  onerror?: (error: unknown) => void;
}): (position: Position | undefined) => Promise<boolean> {
  const { runner, pool, projectorNames, timeoutMs, notices, checkEveryMs = CHECK_EVERY_MS, onerror } = options;
  const waiters = new Set<{ position: Position; finish: (reached: boolean) => void }>();
  let reading = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    clearTimeout(timer);
    if (waiters.size > 0) timer = setTimeout(check, notices?.live() ? checkEveryMs.heard : checkEveryMs.unheard).unref();
  };
  /** One read of the checkpoints for every waiting write; asked again while reading, it reads once more after. */
  const check = () => {
    if (waiters.size === 0) return;
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    clearTimeout(timer);
    void (async () => {
      do {
        again = false;
        const checkpoints = await readCheckpoints(pool, projectorNames).catch((err: unknown) => {
          onerror?.(err);
          return null;
        });
        if (!checkpoints) break;
        for (const waiter of waiters) {
          if (projectorNames.every((name) => comparePositions(checkpoints.get(name) ?? START, waiter.position) >= 0)) waiter.finish(true);
        }
      } while (again && waiters.size > 0);
      reading = false;
      schedule();
    })();
  };
  notices?.on(check);
  return async (position) => {
    if (!position || projectorNames.length === 0) return true;
    if (runner) return runner.waitFor(position, timeoutMs);
    return new Promise<boolean>((resolve) => {
      const waiter = {
        position,
        finish: (reached: boolean) => {
          clearTimeout(bound);
          waiters.delete(waiter);
          resolve(reached);
        },
      };
      const bound = setTimeout(() => waiter.finish(false), timeoutMs);
      waiters.add(waiter);
      check();
    });
  };
}

/**
 * Read-your-writes moved to the reader, for commands whose answer is rendered from the command's
 * own state (it needs no read model): the command answers at once and its position is remembered
 * as the user's latest write, in this process and in Redis (every API process shares it); the
 * user's next read waits (bounded, `settle`) until the read models show it. Commands decide on
 * the event store, never on read models, so only reads need to wait.
 */
export interface DeferredWrites {
  /**
   * `withEarlier`: the answer then reads a read model (a follow's `strategyCount`), so it also waits for the user's
   * earlier deferred writes, learned from the same Redis call that stores this one (one round trip, not a GET besides).
   */
  defer(userId: string, position: Position | undefined, options?: { withEarlier?: boolean }): Promise<void>;
  /**
   * A write of the user the read models were already waited for (bounded): remembered as the user's latest write, here and in Redis,
   * so a read of a memory (the users/me document beside the identity) in any process knows what it must not predate; no read waits for it.
   */
  wrote(userId: string, position: Position | undefined): Promise<void>;
  /** Waits for the user's latest deferred write; answers the user's latest write known (`shared`: Redis answered, so other processes' too). */
  beforeRead(userId: string): Promise<ReadFloor>;
}

/** What a read knows of its user's own writes: the latest one's position (none remembered: undefined), and whether Redis was asked. */
export interface ReadFloor {
  latest: Position | undefined;
  shared: boolean;
}

/**
 * Whether a remembered read (read at `at`) may answer a caller with this floor: only when Redis was asked (a write of theirs taken by
 * another process is known) and it is at or past their latest write; otherwise it is read again.
 */
export const remembersFloor =
  (floor: ReadFloor | null) =>
  (remembered: { at: Position }): boolean =>
    floor?.shared === true && (!floor.latest || comparePositions(remembered.at, floor.latest) >= 0);

/**
 * Positions as fixed-width text, so Redis compares them as strings in position order; `:w` marks a write already waited for
 * (a read does not wait for it again), and sorts after the same position unmarked.
 */
const WIDTH = 20;
interface Written {
  position: Position;
  waited: boolean;
}
const encode = (w: Written) =>
  `${w.position.commit.toString().padStart(WIDTH, '0')}:${w.position.prepare.toString().padStart(WIDTH, '0')}${w.waited ? ':w' : ''}`;
function decode(text: string): Written | undefined {
  const [commit, prepare, mark] = text.split(':');
  if (!/^\d{20}$/.test(commit ?? '') || !/^\d{20}$/.test(prepare ?? '') || (mark !== undefined && mark !== 'w')) return undefined;
  return { position: { commit: BigInt(commit!), prepare: BigInt(prepare!) }, waited: mark === 'w' };
}

/** Keeps the later of the stored and the given position (two processes may defer for one user at once); answers the stored one (nil if none). */
const KEEP_LATER = `local cur = redis.call('GET', KEYS[1])
if (not cur) or ARGV[1] > cur then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return cur`;

/** Redis slower than this (or down) must not stall a request: the write waits as before, the read uses this process's memory. */
const REDIS_BOUND_MS = 100;

const TIMED_OUT: unique symbol = Symbol('timed out');

function bounded<T>(work: Promise<T>): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), REDIS_BOUND_MS)));
  return Promise.race([work.catch((): typeof TIMED_OUT => TIMED_OUT), timeout]).finally(() => clearTimeout(timer));
}

/** What the deferred writes need to know of this process's projections. */
export interface ProjectionsProgress {
  running(): boolean;
  /** the age of the oldest event read and not yet applied */
  lagMs(): number;
  /** whether every read model has applied `position` */
  hasApplied(position: Position): boolean;
}

export function createDeferredWrites(options: {
  /** the runtime's client (its key prefix scopes the keys) */
  redis: Pick<Redis, 'defineCommand' | 'get' | 'status'>;
  settle: (position: Position | undefined) => Promise<unknown>;
  /** this process's projections; null when it runs none (their lag is unknown here: writes wait, as before) */
  projections: ProjectionsProgress | null;
  /**
   * How far behind the projections may be for a write to answer at once. Writers answered at once
   * could otherwise outrun the projections for as long as they keep writing: waiting is what
   * holds them to the projections' pace.
   */
  boundMs: number;
  /** how long a user's latest write is remembered: past the settle bound a read would not wait anyway */
  ttlMs: number;
}): DeferredWrites {
  const { redis, settle, projections, boundMs, ttlMs } = options;
  const keepLater = scriptCommand(redis, 'keepLater', KEEP_LATER, 1);
  const key = (userId: string) => `ryw:${userId}`;
  /** this process's own deferred writes, the latest per user (bounded, oldest out) */
  const local = new Map<string, Written>();
  /** this process's deferred writes not yet seen applied, oldest first, with when they were answered (monotonic) */
  const unapplied: Array<{ position: Position; at: number }> = [];
  /** the later write; at one position, the one waited for */
  const later = (a: Written | undefined, b: Written | undefined) => {
    if (!a || !b) return a ?? b;
    const order = comparePositions(a.position, b.position);
    return order > 0 || (order === 0 && a.waited) ? a : b;
  };
  // Behind: the projections' own lag (events read, not applied), or a write of ours they have not
  // applied for longer than the bound (events not even read: a visibility hold, a read retry).
  const behind = (): boolean => {
    if (!projections?.running() || unapplied.length >= 10_000) return true;
    while (unapplied.length > 0 && projections.hasApplied(unapplied[0]!.position)) unapplied.shift();
    const oldest = unapplied[0];
    return projections.lagMs() > boundMs || (oldest !== undefined && performance.now() - oldest.at > boundMs);
  };
  const ready = () => redis.status === 'ready';
  /**
   * The user's latest write, here and (bounded) in Redis; answers what Redis held before (null: nothing),
   * TIMED_OUT when Redis did not take it (down, slow or not ready).
   */
  const record = async (userId: string, written: Written): Promise<string | null | typeof TIMED_OUT> => {
    const latest = later(local.get(userId), written)!;
    local.delete(userId);
    local.set(userId, latest);
    if (local.size > 10_000) local.delete(local.keys().next().value!);
    if (!ready()) return TIMED_OUT;
    const stored = await bounded(keepLater(key(userId), encode(written), String(ttlMs)));
    return typeof stored === 'string' || stored === TIMED_OUT ? stored : null;
  };
  const beforeRead = async (userId: string): Promise<ReadFloor> => {
    const stored = ready() ? await bounded(redis.get(key(userId))) : TIMED_OUT;
    const shared = typeof stored === 'string' ? decode(stored) : undefined;
    const latest = later(local.get(userId), shared);
    if (latest && !latest.waited) await settle(latest.position);
    return { latest: latest?.position, shared: stored !== TIMED_OUT };
  };
  return {
    async defer(userId, position, options = {}) {
      const withEarlier = options.withEarlier === true;
      if (!position || behind() || !ready()) {
        await Promise.all([position && settle(position), withEarlier && beforeRead(userId)]);
        if (position) await record(userId, { position, waited: true });
        return;
      }
      const earlierHere = local.get(userId);
      unapplied.push({ position, at: performance.now() });
      const stored = await record(userId, { position, waited: false });
      if (stored === TIMED_OUT) {
        await settle(withEarlier ? later(earlierHere, { position, waited: false })!.position : position);
        return;
      }
      const earlier = withEarlier ? later(earlierHere, stored === null ? undefined : decode(stored)) : undefined;
      if (earlier && !earlier.waited) await settle(earlier.position);
    },
    async wrote(userId, position) {
      if (position) await record(userId, { position, waited: true });
    },
    beforeRead,
  };
}
