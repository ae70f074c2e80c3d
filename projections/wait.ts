import type { Redis } from 'ioredis';
import type { Pool } from '../infra/db.ts';
import { comparePositions, type Position } from '../infra/eventstore/port.ts';
import { readCheckpoints } from './checkpoints.ts';
import type { ProjectionRunner } from './runner.ts';

/**
 * Read-your-writes: wait (bounded) until every read model has applied `position`. With a runner
 * in this process its commits wake the wait; otherwise (API-only process) the checkpoints table is
 * polled. On time-out the answer goes out anyway (false); a later query shows the effect.
 */
export function createReadYourWrites(options: {
  runner?: ProjectionRunner;
  pool: Pool;
  projectorNames: string[];
  timeoutMs: number;
}): (position: Position | undefined) => Promise<boolean> {
  const { runner, pool, projectorNames, timeoutMs } = options;
  return async (position) => {
    if (!position || projectorNames.length === 0) return true;
    if (runner) return runner.waitFor(position, timeoutMs);
    const deadline = performance.now() + timeoutMs;
    let delay = 2;
    while (performance.now() < deadline) {
      const checkpoints = await readCheckpoints(pool, projectorNames);
      if ([...checkpoints.values()].every((c) => comparePositions(c, position) >= 0)) return true;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 50);
    }
    return false;
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
  beforeRead(userId: string): Promise<void>;
}

/** Positions as fixed-width text, so Redis compares them as strings in position order. */
const WIDTH = 20;
const encode = (p: Position) => `${p.commit.toString().padStart(WIDTH, '0')}:${p.prepare.toString().padStart(WIDTH, '0')}`;
function decode(text: string): Position | undefined {
  const [commit, prepare] = text.split(':');
  return /^\d{20}$/.test(commit ?? '') && /^\d{20}$/.test(prepare ?? '') ? { commit: BigInt(commit!), prepare: BigInt(prepare!) } : undefined;
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
  redis: Pick<Redis, 'eval' | 'get' | 'status'>;
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
  const key = (userId: string) => `ryw:${userId}`;
  /** this process's own deferred writes, the latest per user (bounded, oldest out) */
  const local = new Map<string, Position>();
  /** this process's deferred writes not yet seen applied, oldest first, with when they were answered (monotonic) */
  const unapplied: Array<{ position: Position; at: number }> = [];
  const later = (a: Position | undefined, b: Position | undefined) => (!a ? b : !b ? a : comparePositions(a, b) >= 0 ? a : b);
  // Behind: the projections' own lag (events read, not applied), or a write of ours they have not
  // applied for longer than the bound (events not even read: a visibility hold, a read retry).
  const behind = (): boolean => {
    if (!projections?.running() || unapplied.length >= 10_000) return true;
    while (unapplied.length > 0 && projections.hasApplied(unapplied[0]!.position)) unapplied.shift();
    const oldest = unapplied[0];
    return projections.lagMs() > boundMs || (oldest !== undefined && performance.now() - oldest.at > boundMs);
  };
  const ready = () => redis.status === 'ready';
  const beforeRead = async (userId: string) => {
    const stored = ready() ? await bounded(redis.get(key(userId))) : TIMED_OUT;
    const shared = typeof stored === 'string' ? decode(stored) : undefined;
    const latest = later(local.get(userId), shared);
    if (latest) await settle(latest);
  };
  return {
    async defer(userId, position, options = {}) {
      const withEarlier = options.withEarlier === true;
      if (!position || behind() || !ready()) {
        await Promise.all([position && settle(position), withEarlier && beforeRead(userId)]);
        return;
      }
      const earlierHere = local.get(userId);
      local.delete(userId);
      local.set(userId, later(earlierHere, position)!);
      if (local.size > 10_000) local.delete(local.keys().next().value!);
      unapplied.push({ position, at: performance.now() });
      const stored = await bounded(redis.eval(KEEP_LATER, 1, key(userId), encode(position), String(ttlMs)));
      if (stored === TIMED_OUT) {
        await settle(withEarlier ? later(earlierHere, position) : position);
        return;
      }
      const earlier = withEarlier ? later(earlierHere, typeof stored === 'string' ? decode(stored) : undefined) : undefined;
      if (earlier) await settle(earlier);
    },
    beforeRead,
  };
}
