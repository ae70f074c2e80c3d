// Snapshots of a pool's fold (domain/pool/fold-snapshot.ts) never change a statement: over random
// pool histories decided by the pool's decider (bench/audit.ts simulatedPool), random periods and
// snapshots taken from random prefixes of the stream, the statement resumed from the latest snapshot
// that serves the period equals the one replayed from the first event, rendered as it is signed.
// The fold's output on a reference history is pinned: should it change, bump POOL_FOLD_VERSION.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import t from 'tap';
import { poolPart } from '../../../api/routes/statements/build.ts';
import { simulatedPool } from '../../../bench/audit.ts';
import {
  decodeSnapshot,
  encodeSnapshot,
  foldSnapshots,
  POOL_FOLD_VERSION,
  servesPeriod,
  snapshotsAt,
  type PoolFoldSnapshot,
} from '../../../domain/pool/fold-snapshot.ts';
import { timeOf } from '../../../domain/pool/events.ts';
import type { PoolHistoryEvent } from '../../../domain/pool/history.ts';
import { canonicalJson } from '../../../domain/shared/canonical-json.ts';

/**
 * The reference for snapshotsAt: the snapshot foldSnapshots takes at `revision` alone (the one due
 * there exactly, with the event after it known); null where none can be taken.
 */
function snapshotAt(history: readonly PoolHistoryEvent[], revision: number): PoolFoldSnapshot | null {
  const [snapshot] = foldSnapshots(history.slice(0, revision + 2), null, revision + 1);
  return snapshot?.revision === revision ? snapshot : null;
}

/** A simulated pool's history as a stream holds it; `jitter` moves recorded times back and forth (a clock that stepped). */
function historyOf(seed: number, length: number, jitter: number[] = []): PoolHistoryEvent[] {
  return simulatedPool(seed, length).events.map(({ event, at }, i) => ({
    id: `e-${seed}-${i}`,
    time: new Date(at.getTime() + (jitter[i % Math.max(jitter.length, 1)] ?? 0)).toISOString(),
    event,
    position: { commit: String(1000 + i), prepare: String(i) },
  }));
}

/** Two simulated lives one after the other (the second follow opens the ledger anew: the receipts' mark starts again), ids kept apart. */
function twoLives(seed: number, length: number, jitter?: number[]): PoolHistoryEvent[] {
  const first = historyOf(seed, length, jitter);
  const second = historyOf(seed + 100, length, jitter);
  const shift = Date.parse(first.at(-1)!.time) - Date.parse(second[0]!.time) + 60_000;
  const later = (iso: string) => new Date(Date.parse(iso) + shift).toISOString();
  return [
    ...first,
    ...second.map((e, i) => ({
      ...e,
      id: `second-${e.id}`,
      time: later(e.time),
      // the event's own time too: receipts read a command's neighbours by it
      event: JSON.parse(JSON.stringify(e.event).replaceAll(/"(\d{4}-\d\d-\d\dT[^"]+Z)"/g, (_, t: string) => `"${later(t)}"`)) as PoolHistoryEvent['event'],
      position: { commit: String(5000 + i), prepare: String(i) },
    })),
  ];
}

/** A share of a range, evenly (fc.double leans to its ends). */
const share = fc.integer({ min: 0, max: 1000 }).map((n) => n / 1000);

const latestServing = (snapshots: PoolFoldSnapshot[], at: Date, from: Date): PoolFoldSnapshot | undefined =>
  snapshots.filter((s) => servesPeriod(s, at, from)).at(-1);

const render = (history: PoolHistoryEvent[], at: Date, from: Date, snapshot?: PoolFoldSnapshot) =>
  canonicalJson(poolPart(history, 'a', 'virtual', at, from, snapshot));

t.test('a statement resumed from a snapshot equals the one replayed from the first event', (t) => {
  let resumed = 0;
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 50 }),
      fc.integer({ min: 30, max: 400 }),
      fc.integer({ min: 3, max: 60 }),
      share,
      share,
      share,
      fc.option(fc.array(fc.integer({ min: -120_000, max: 120_000 }), { minLength: 1, maxLength: 7 }), { nil: undefined }),
      fc.boolean(),
      (seed, length, every, atShare, fromShare, writtenShare, jitter, twice) => {
        const history = twice ? twoLives(seed, length, jitter) : historyOf(seed, length, jitter);
        const times = history.map((e) => Date.parse(e.time));
        const [first, last] = [Math.min(...times), Math.max(...times)];
        const at = new Date(Math.round(first + (last - first) * atShare));
        const from = new Date(Math.round(first + (at.getTime() - first) * fromShare));
        // written by an earlier statement, which read the stream when it was shorter
        const written = foldSnapshots(history.slice(0, Math.max(1, Math.round(history.length * writtenShare))), null, every);
        const snapshots = written.map((s) => decodeSnapshot(encodeSnapshot(s)));
        const snapshot = latestServing(snapshots, at, from);
        if (!snapshot) return;
        resumed += 1;
        const expected = render(history, at, from);
        const actual = render(history.slice(snapshot.revision + 1), at, from, snapshot);
        if (actual !== expected) throw new Error(`statement differs resumed from revision ${snapshot.revision}`);
      },
    ),
    { numRuns: 200 },
  );
  t.ok(resumed > 30, `many runs resumed from a snapshot (${resumed})`);
  t.end();
});

t.test("no snapshot ends inside a command: a receipt reads its trigger from the command's other events", (t) => {
  const history = historyOf(7, 3000);
  const settlement = history.findIndex((e, i) => e.event.type === 'FeesSettled' && i > 0 && timeOf(history[i - 1]!.event) === timeOf(e.event));
  t.ok(settlement > 0, 'a settlement after another event of its command');
  t.equal(snapshotAt(history, settlement - 1), null, 'none between it and that event');
  const command = timeOf(history[settlement]!.event);
  const revisions = foldSnapshots(history.slice(0, settlement + 50), null, 1).map((s) => s.revision);
  t.ok(revisions.length > settlement / 2, 'with one due at every revision, most revisions have one');
  t.notOk(
    revisions.some((r) => timeOf(history[r]!.event) === command && timeOf(history[r + 1]!.event) === command),
    'but none inside the command',
  );
  t.end();
});

t.test('snapshots resumed from a snapshot are those taken from the first event', (t) => {
  const history = historyOf(3, 900);
  const all = foldSnapshots(history, null, 100);
  t.ok(all.length >= 7, `about one every 100 events (${all.length})`);
  const later = foldSnapshots(history, decodeSnapshot(encodeSnapshot(all[2]!)), 100);
  t.same(later.map(encodeSnapshot), all.slice(3).map(encodeSnapshot));
  t.end();
});

t.test("one fold's snapshots at many revisions are snapshotAt's at each, byte for byte", (t) => {
  let taken = 0;
  let none = 0;
  const encoded = (s: PoolFoldSnapshot | null) => (s ? encodeSnapshot(s) : null);
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 50 }),
      fc.integer({ min: 2, max: 300 }),
      fc.option(fc.array(fc.integer({ min: -120_000, max: 120_000 }), { minLength: 1, maxLength: 7 }), { nil: undefined }),
      fc.boolean(),
      // revisions as shares of the history, some past its end (none there); repeats kept
      fc.array(fc.integer({ min: 0, max: 1100 }), { maxLength: 12 }),
      (seed, length, jitter, twice, shares) => {
        const history = twice ? twoLives(seed, length, jitter) : historyOf(seed, length, jitter);
        const revisions = shares.map((n) => Math.floor((history.length * n) / 1000)).sort((a, b) => a - b);
        // compared once the fold has gone past them all: a snapshot taken early is not changed by the later steps
        const actual = snapshotsAt(history, revisions).map(encoded);
        const expected = revisions.map((r) => encoded(snapshotAt(history, r)));
        taken += expected.filter((e) => e !== null).length;
        none += expected.filter((e) => e === null).length;
        if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(`differs at revisions ${revisions.join(', ')}`);
      },
    ),
    { numRuns: 200 },
  );
  t.ok(taken > 200 && none > 20, `both snapshots (${taken}) and revisions without one (${none}) compared`);
  t.throws(() => snapshotsAt(historyOf(1, 50), [10, 5]), /ascend/, 'revisions out of order are refused');
  t.same(snapshotsAt(historyOf(1, 50), []), []);
  t.end();
});

t.test('encoding round-trips exactly, bigints and money alike', (t) => {
  const [snapshot] = foldSnapshots(historyOf(5, 300), null, 100);
  const withBig = { ...snapshot!, extra: { big: 2n ** 70n, money: Number.MAX_SAFE_INTEGER, negative: -123_456_789 } } as PoolFoldSnapshot;
  const decoded = decodeSnapshot(encodeSnapshot(withBig)) as PoolFoldSnapshot & { extra: unknown };
  t.same(decoded.extra, { big: 2n ** 70n, money: Number.MAX_SAFE_INTEGER, negative: -123_456_789 });
  t.equal(typeof (decoded.extra as { big: unknown }).big, 'bigint');
  t.equal(encodeSnapshot(decoded), encodeSnapshot(withBig), 'encoded again, the same text');
  t.end();
});

// The fold's output on a reference history (seed 11, 2,000 events): a change of the fold (state.ts
// evolve, receipts, the snapshot's fields) changes it. If this fails, bump POOL_FOLD_VERSION in
// domain/pool/fold-snapshot.ts (stored snapshots of the old fold are then ignored) and pin the new digest.
t.test('the fold is pinned at its version', (t) => {
  const snapshots = foldSnapshots(historyOf(11, 2000), null, 500);
  const digest = createHash('sha256').update(snapshots.map(encodeSnapshot).join('\n')).digest('hex');
  t.equal(POOL_FOLD_VERSION, 1);
  t.equal(digest, 'c064fb5bafcd96f68876d588158acf7bd30190cd08c0a4d930fef808104c7a7e', 'the fold changed: bump POOL_FOLD_VERSION and pin the new digest');
  t.end();
});
