// Snapshots of a pool's fold (docs/decisions.md, "Statement fold snapshots"): what a statement's
// replay (statement.ts) holds after the history's first events, so a statement whose `from` is
// later reads only the events after it. Pure: taken from a history, encoded to text and back.
// A snapshot never changes what a statement says: the statement resumed from one equals the one
// replayed from the first event (tested over random histories).
import { PersistentMap } from '../shared/persistent-map.ts';
import type { MicroUsd } from '../shared/money.ts';
import { timeOf } from './events.ts';
import { withoutBookkeeping, type PoolHistoryEvent } from './history.ts';
import { nextHighWaterMark } from './receipts.ts';
import { evolve, initialState, type PoolState } from './state.ts';

/**
 * The fold's version: bump it with any change to what the fold keeps or computes (state.ts evolve,
 * receipts.ts, the snapshot's fields) or to how a stored event is read into the fold (an upcast in
 * projections/subscriptions/audit.ts historyEventOf); snapshots of another version are ignored. The fold's output
 * on a reference history is pinned in test/domain/pool/fold-snapshot.test.ts, which says so.
 */
export const POOL_FOLD_VERSION = 1;

/** Snapshots are taken about every this many events. */
export const SNAPSHOT_EVERY = 1000;

export interface PoolFoldSnapshot {
  version: number;
  /** the stream revision (= the history's index) of the last event folded */
  revision: number;
  /** that event's id: a stream whose event at `revision` is another one does not match */
  eventId: string;
  /** that event's time and global position */
  time: string;
  position: NonNullable<PoolHistoryEvent['position']> | null;
  /** the latest time among the events folded (ms): the snapshot serves a statement whose `from` is later */
  latestMs: number;
  /** the pool after them, without the bookkeeping only decisions read (history.ts withoutBookkeeping) */
  state: PoolState;
  /** the fee receipts' high-water mark after them (receipts.ts) */
  highWaterMark: MicroUsd;
  /** whether any of them opened a subscription */
  followedOnce: boolean;
}

/**
 * Whether a snapshot may end after `events[index]`: the next event is known and was decided at
 * another time, so no fee receipt after the snapshot looks back across it for its trigger
 * (receipts.ts triggerOf reads the neighbours of one command's time).
 */
const endsACommand = (events: readonly PoolHistoryEvent[], index: number): boolean =>
  index + 1 < events.length && timeOf(events[index]!.event) !== timeOf(events[index + 1]!.event);

/**
 * The revisions of the snapshots of `history` (the whole stream, oldest first) after `after`'s (or
 * from the first event): the first revision at or past each multiple of `every` (minus one) where a
 * command ends. They depend on the events' times only: found without folding (the statement builder
 * asks which of them are stored before it folds any).
 */
export function snapshotRevisions(history: readonly PoolHistoryEvent[], after: PoolFoldSnapshot | null, every = SNAPSHOT_EVERY): number[] {
  const out: number[] = [];
  const first = after ? after.revision + 1 : 0;
  let target = (Math.floor(first / every) + 1) * every - 1;
  for (let index = Math.max(first, target); index < history.length - 1; index++) {
    if (!endsACommand(history, index)) continue;
    out.push(index);
    target = (Math.floor(index / every) + 1) * every - 1;
    if (target <= index) target = index + every;
    index = target - 1;
  }
  return out;
}

/** What the fold holds after some events: the snapshot's running fields. */
interface Folded {
  state: PoolState;
  highWaterMark: MicroUsd;
  latestMs: number;
  followedOnce: boolean;
}

const foldedFrom = (after: PoolFoldSnapshot | null): Folded => ({
  state: after?.state ?? initialState(),
  highWaterMark: after?.highWaterMark ?? 0,
  latestMs: after?.latestMs ?? Number.NEGATIVE_INFINITY,
  followedOnce: after?.followedOnce ?? false,
});

/** The fold's one step: `recorded` folded into `folded` (in place). */
function foldStep(folded: Folded, recorded: PoolHistoryEvent): void {
  folded.state = evolve(folded.state, recorded.event);
  folded.highWaterMark = nextHighWaterMark(folded.highWaterMark, recorded.event);
  folded.latestMs = Math.max(folded.latestMs, Date.parse(recorded.time));
  folded.followedOnce ||= recorded.event.type === 'AgentFollowed';
}

/** The snapshot of `folded` after `history[revision]`, whose state is already without the bookkeeping. */
const snapshotOf = (history: readonly PoolHistoryEvent[], revision: number, folded: Folded, state: PoolState): PoolFoldSnapshot => {
  const recorded = history[revision]!;
  return {
    version: POOL_FOLD_VERSION,
    revision,
    eventId: recorded.id,
    time: recorded.time,
    position: recorded.position ?? null,
    latestMs: folded.latestMs,
    state,
    highWaterMark: folded.highWaterMark,
    followedOnce: folded.followedOnce,
  };
};

/**
 * The snapshots of `history` (the whole stream, oldest first) after `after`'s (or from the first
 * event), at snapshotRevisions'. Nothing when the history holds fewer events than the next one needs.
 */
export function foldSnapshots(history: readonly PoolHistoryEvent[], after: PoolFoldSnapshot | null, every = SNAPSHOT_EVERY): PoolFoldSnapshot[] {
  const out: PoolFoldSnapshot[] = [];
  const folded = foldedFrom(after);
  let index = after ? after.revision + 1 : 0;
  for (const revision of snapshotRevisions(history, after, every)) {
    for (; index <= revision; index++) foldStep(folded, history[index]!);
    // the fold goes on from the snapshot's state, as a statement resumed from it does
    folded.state = withoutBookkeeping(folded.state);
    out.push(snapshotOf(history, revision, folded, folded.state));
  }
  return out;
}

/**
 * The snapshot at each of `revisions` (ascending; a repeat answers the same) replayed from the
 * history's first event, in one fold (the audit's check of a stream's stored snapshots: linear in
 * its events); null where none can be taken (the command goes on after it, or the history is too
 * short). Each equals the one foldSnapshots takes at that revision alone (tested over random
 * histories). The running state keeps its bookkeeping; each snapshot takes it without.
 */
export function snapshotsAt(history: readonly PoolHistoryEvent[], revisions: readonly number[]): Array<PoolFoldSnapshot | null> {
  const folded = foldedFrom(null);
  let index = 0;
  let previous = Number.NEGATIVE_INFINITY;
  return revisions.map((revision) => {
    if (!(revision >= previous)) throw new Error(`snapshotsAt: revisions must ascend (${revision} after ${previous})`);
    previous = revision;
    if (!Number.isInteger(revision) || revision < 0 || !endsACommand(history, revision)) return null;
    for (; index <= revision; index++) foldStep(folded, history[index]!);
    return snapshotOf(history, revision, folded, withoutBookkeeping(folded.state));
  });
}

/** The bound a snapshot's latest time must be below to start a statement of [from, at] (servesPeriod); null without `from`. */
export const periodBound = (at: Date, from: Date | null): number | null => (from === null ? null : Math.min(from.getTime(), at.getTime() + 1));

/** Whether `snapshot` can start a statement of [from, at]: every event it folded happened before `from`, and by `at`. */
export const servesPeriod = (snapshot: PoolFoldSnapshot, at: Date, from: Date | null): boolean => {
  const bound = periodBound(at, from);
  return bound !== null && snapshot.latestMs < bound;
};

/** The bookkeeping maps a snapshot's state holds (always empty: withoutBookkeeping). */
const MAPS = ['transfers', 'trades', 'payouts'] as const;

/**
 * A snapshot as text: JSON, each bigint as `{"$bigint":"<decimal>"}` (none today; kept exact if
 * one comes), the state's empty bookkeeping maps left out. Money is integer micro-USD, exact in JSON.
 */
export function encodeSnapshot(snapshot: PoolFoldSnapshot): string {
  return JSON.stringify(snapshot, (key, value: unknown) => {
    if (typeof value === 'bigint') return { $bigint: value.toString() };
    if (value instanceof PersistentMap) {
      if (value.size !== 0) throw new Error(`a fold snapshot's ${key} must be empty`);
      return undefined;
    }
    return value;
  });
}

/** The snapshot of encodeSnapshot's text. */
export function decodeSnapshot(text: string): PoolFoldSnapshot {
  const snapshot = JSON.parse(text, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && Object.keys(value).length === 1 && typeof (value as { $bigint?: unknown }).$bigint === 'string'
      ? BigInt((value as { $bigint: string }).$bigint)
      : value,
  ) as PoolFoldSnapshot;
  const state = snapshot.state as unknown as Record<string, unknown>;
  for (const map of MAPS) state[map] = PersistentMap.empty();
  return snapshot;
}
