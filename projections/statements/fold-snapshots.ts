// Where a statement's fold snapshots live (docs/decisions.md, "Statement fold snapshots"): the table
// `pool_fold_snapshots` beside the read models, written lazily from the statement builder's reads (never
// by a projector; the routes' after the answer: "Cold statements: snapshots written after the answer")
// about every SNAPSHOT_EVERY events of a pool, read back by the next statement whose
// `from` is later than every event one folded. A cache of the events, never a source: a snapshot of
// another fold version, or whose event at its revision is not the stream's, is ignored; the audit
// (`npm run audit -- verify`) checks each one against a replay of its stream.
import {
  decodeSnapshot,
  encodeSnapshot,
  foldSnapshots,
  periodBound,
  POOL_FOLD_VERSION,
  SNAPSHOT_EVERY,
  snapshotsAt,
  snapshotRevisions,
  type PoolFoldSnapshot,
} from '../../domain/pool/fold-snapshot.ts';
import type { PoolHistoryEvent } from '../../domain/pool/history.ts';
import type { Migration, Pool } from '../../infra/db.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import { historyEventOf, POOL_STREAM_PREFIX } from '../subscriptions/audit.ts';

export const poolFoldMigrations: Migration[] = [
  {
    id: 'statements/001-pool-fold-snapshots',
    sql: `CREATE TABLE IF NOT EXISTS pool_fold_snapshots (
      stream_name text NOT NULL,
      fold_version integer NOT NULL,
      revision bigint NOT NULL,
      event_id text NOT NULL,
      latest_ms bigint NOT NULL,
      body text NOT NULL,
      written_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (stream_name, fold_version, revision))`,
  },
];

/** The latest snapshot of this fold version whose events all happened before `bound` (periodBound). */
async function latestSnapshot(db: Pool, streamName: string, bound: number): Promise<PoolFoldSnapshot | null> {
  const { rows } = await db.query<{ body: string }>({
    name: 'pool-fold-snapshot-latest',
    text: `SELECT body FROM pool_fold_snapshots WHERE stream_name = $1 AND fold_version = $2 AND latest_ms < $3
      ORDER BY revision DESC LIMIT 1`,
    values: [streamName, POOL_FOLD_VERSION, bound],
  });
  return rows[0] ? decodeSnapshot(rows[0].body) : null;
}

/** Writes `snapshots` (a snapshot already there is kept: a stream's prefix never changes) and drops the stream's snapshots of other fold versions. */
export async function saveSnapshots(db: Pool, streamName: string, snapshots: PoolFoldSnapshot[]): Promise<void> {
  await db.query({
    name: 'pool-fold-snapshot-save',
    text: `INSERT INTO pool_fold_snapshots (stream_name, fold_version, revision, event_id, latest_ms, body)
      SELECT $1, $2, * FROM unnest($3::bigint[], $4::text[], $5::bigint[], $6::text[])
      ON CONFLICT DO NOTHING`,
    values: [
      streamName,
      POOL_FOLD_VERSION,
      snapshots.map((s) => s.revision),
      snapshots.map((s) => s.eventId),
      snapshots.map((s) => s.latestMs),
      snapshots.map(encodeSnapshot),
    ],
  });
  await db.query('DELETE FROM pool_fold_snapshots WHERE stream_name = $1 AND fold_version <> $2', [streamName, POOL_FOLD_VERSION]);
}

/** The pool events among a stream's entries; null when another event is among them (no snapshot is taken of such a stream). */
async function historyFrom(store: Pick<EventStore, 'readStreamEntries'>, streamName: string, fromRevision: number) {
  const entries = await store.readStreamEntries(streamName, { fromRevision: BigInt(fromRevision) });
  const events: PoolHistoryEvent[] = [];
  for (const entry of entries) {
    const event = historyEventOf(entry);
    if (event) events.push(event);
  }
  return { events, onlyPoolEvents: events.length === entries.length };
}

/** Which of `revisions` the stream's snapshots of this fold version hold already. */
async function storedRevisions(db: Pool, streamName: string, revisions: number[]): Promise<Set<number>> {
  const { rows } = await db.query<{ revision: string }>({
    name: 'pool-fold-snapshot-stored',
    text: 'SELECT revision FROM pool_fold_snapshots WHERE stream_name = $1 AND fold_version = $2 AND revision = ANY($3::bigint[])',
    values: [streamName, POOL_FOLD_VERSION, revisions],
  });
  return new Set(rows.map((r) => Number(r.revision)));
}

/**
 * Folds the history for the snapshots due after `after` (foldSnapshots) and writes those not `stored`;
 * the number written (0 when the write failed: a cache).
 */
async function writeDue(
  db: Pool,
  streamName: string,
  whole: readonly PoolHistoryEvent[],
  after: PoolFoldSnapshot | null,
  stored: ReadonlySet<number>,
): Promise<number> {
  const due = foldSnapshots(whole, after).filter((s) => !stored.has(s.revision));
  try {
    if (due.length) await saveSnapshots(db, streamName, due);
    return due.length;
  } catch {
    // a cache not written: the next statement reads the stream again
    return 0;
  }
}

/**
 * Snapshot writes run off a statement's path (docs/decisions.md, "Cold statements: snapshots written
 * after the answer"): each started once `after` settles (the answer sent), one at a time per process;
 * a write for a stream already waiting or running, or beyond MAX_WAITING, is dropped (a cache: the
 * next statement of the pool hands it again).
 */
export interface SnapshotWrites {
  later(streamName: string, write: () => Promise<unknown>, after?: PromiseLike<unknown>): void;
  /** Resolves once every write handed over has ended (tests; the service's close). */
  idle(): Promise<void>;
}

const MAX_WAITING = 16;

export function createSnapshotWrites(): SnapshotWrites {
  const pending = new Set<string>();
  let chain: Promise<unknown> = Promise.resolve();
  return {
    later(streamName, write, after) {
      if (pending.has(streamName) || pending.size >= MAX_WAITING) return;
      pending.add(streamName);
      const started = Promise.resolve(after).then(
        () => undefined,
        () => undefined,
      );
      // one at a time: each waits for its answer and for the write before it
      chain = Promise.all([chain, started])
        .then(() => new Promise((resolve) => setImmediate(resolve)))
        .then(write)
        .catch(() => undefined)
        .finally(() => pending.delete(streamName));
    },
    async idle() {
      while (pending.size) await chain;
    },
  };
}

export interface StatementHistory {
  /** the pool's history after `snapshot`'s event, or the whole of it when there is none */
  history: PoolHistoryEvent[];
  snapshot?: PoolFoldSnapshot;
  /** snapshots this read wrote (0 when their write was handed to `snapshotWrites`) */
  written: number;
}

/**
 * What one pool's statement of [from, at] replays: the latest snapshot that serves the period (its
 * event is checked to be the stream's, else the stream's snapshots from it on are dropped and the
 * whole stream read), and the events after it. Then, when the events read reach past where the next
 * snapshot is due and one due is not stored yet (one query for their revisions), those snapshots are
 * folded and written: handed to `snapshotWrites` when given (the routes': after the answer), else
 * before this returns (a failed write leaves the statement as it is: the snapshots are a cache).
 */
export async function statementHistory(
  deps: { store: Pick<EventStore, 'readStreamEntries'>; pool: Pool; snapshotWrites?: Pick<SnapshotWrites, 'later'> | undefined },
  poolId: string,
  at: Date,
  from: Date | undefined,
): Promise<StatementHistory> {
  const streamName = `${POOL_STREAM_PREFIX}${poolId}`;
  const bound = periodBound(at, from ?? null);
  let snapshot = bound === null ? null : await latestSnapshot(deps.pool, streamName, bound);
  let read = snapshot ? await historyFrom(deps.store, streamName, snapshot.revision) : null;
  if (snapshot && read?.events[0]?.id !== snapshot.eventId) {
    await deps.pool.query('DELETE FROM pool_fold_snapshots WHERE stream_name = $1 AND revision >= $2', [streamName, snapshot.revision]);
    snapshot = null;
  }
  if (!snapshot || !read) read = await historyFrom(deps.store, streamName, 0);
  const history = snapshot ? read.events.slice(1) : read.events;
  let written = 0;
  if (read.onlyPoolEvents && history.length > SNAPSHOT_EVERY) {
    // foldSnapshots indexes the whole history: the events after the snapshot, placed after it
    const whole = snapshot ? new Array<PoolHistoryEvent>(snapshot.revision + 1).concat(history) : history;
    // the snapshots due already stored (a whole history's after its first statement) are neither folded nor written again
    const due = snapshotRevisions(whole, snapshot);
    const stored = due.length ? await storedRevisions(deps.pool, streamName, due) : new Set<number>();
    if (due.some((revision) => !stored.has(revision))) {
      const write = () => writeDue(deps.pool, streamName, whole, snapshot, stored);
      if (deps.snapshotWrites) deps.snapshotWrites.later(streamName, write);
      else written = await write();
    }
  }
  return { history, ...(snapshot ? { snapshot } : {}), written };
}

export interface SnapshotAudit {
  /** snapshots of this fold version equal to a replay of their stream up to their revision */
  match: number;
  /** those that are not (each listed) */
  different: Array<{ streamName: string; revision: number }>;
  /** snapshots of other fold versions (ignored by statements) */
  otherVersions: number;
}

/** How many streams' snapshots the audit reads at a time. */
export const AUDIT_PAGE_STREAMS = 100;

/**
 * Every stored snapshot of this fold version against a replay of its stream from the first event,
 * `pageStreams` streams at a time (keyset on the stream's name, in the table's order), so what the
 * audit holds is one page's snapshots and one stream's events whatever the table's size.
 */
export async function auditSnapshots(
  store: Pick<EventStore, 'readStreamEntries'>,
  db: Pool,
  { pageStreams = AUDIT_PAGE_STREAMS }: { pageStreams?: number } = {},
): Promise<SnapshotAudit> {
  if (!Number.isInteger(pageStreams) || pageStreams < 1) throw new RangeError(`pageStreams must be a whole number of at least 1, not ${pageStreams}`);
  const audit: SnapshotAudit = { match: 0, different: [], otherVersions: 0 };
  // '' sorts before every stream's name (a deterministic collation breaks a tie bytewise)
  let after = '';
  for (;;) {
    // the snapshots of the next `pageStreams` streams: a range of the primary key's (the bodies of this fold version's only)
    const { rows } = await db.query<{ stream_name: string; fold_version: number; revision: string; body: string | null }>({
      name: 'pool-fold-snapshot-audit-page',
      text: `SELECT stream_name, fold_version, revision, CASE WHEN fold_version = $3 THEN body END AS body
        FROM pool_fold_snapshots WHERE stream_name > $1 AND stream_name <= (
          SELECT max(stream_name) FROM (SELECT DISTINCT stream_name FROM pool_fold_snapshots WHERE stream_name > $1 ORDER BY stream_name LIMIT $2) page)
        ORDER BY stream_name, fold_version, revision`,
      values: [after, pageStreams, POOL_FOLD_VERSION],
    });
    if (!rows.length) return audit;
    // each stream's snapshots of this fold version, ascending (the query's order)
    const streams = new Map<string, Array<{ revision: number; body: string | null }>>();
    for (const row of rows) {
      if (row.fold_version !== POOL_FOLD_VERSION) {
        audit.otherVersions += 1;
        continue;
      }
      const stored = streams.get(row.stream_name) ?? [];
      stored.push({ revision: Number(row.revision), body: row.body });
      streams.set(row.stream_name, stored);
    }
    for (const [streamName, stored] of streams) {
      // one fold of the stream answers every stored revision
      const { events } = await historyFrom(store, streamName, 0);
      const revisions = stored.map((s) => s.revision);
      const replayed = snapshotsAt(events, revisions);
      stored.forEach(({ revision, body }, i) => {
        const snapshot = replayed[i];
        if (snapshot && encodeSnapshot(snapshot) === body) audit.match += 1;
        else audit.different.push({ streamName, revision });
      });
    }
    after = rows.at(-1)!.stream_name;
  }
}
