import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Pool } from '../db.ts';
import {
  ConcurrencyError,
  START,
  type AppendResult,
  type EventData,
  type EventStore,
  type ExpectedRevision,
  type Position,
  type ReadAllFactsOptions,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type RecordedFact,
  type SubscribeOptions,
  type Subscription,
} from './port.ts';

const CHANNEL = 'events_appended';
const FALLBACK_POLL_MS = 500;
const FAST_RETRY_WINDOW_MS = 1000;
const SUBSCRIPTION_BATCH = 1000;

// The event reads (global, stream, coalesced streams) take rows as arrays, decoded while they
// stream in by the type parsers of EVENT_TYPES (this query's only; nothing global changes):
// int8 and xid8 straight to bigint, jsonb by pg's own parser, timestamptz by a fast path for
// PostgreSQL's ISO output that gives the Date pg's parser gives and hands anything else to it.
// pg's row objects, its regex date parser and the text cast of the transaction id were most of the
// client's time and a seventh of the server's in the global read, the spine of every read model.
// The transaction id arrives as xid8's own output (its digits); ordering uses the xid8 column
// itself, never text (as text, "100000" sorts before "99999").
const COLUMNS = 'position, transaction_id, stream_name, revision, event_id, event_type, data, metadata, created_at';

const INT8 = 20;
const XID8 = 5069;
const TIMESTAMPTZ = 1184;
/** pg's own timestamptz parser (as configured when it is asked) */
const pgTimestamptz = (text: string): unknown => pg.types.getTypeParser(TIMESTAMPTZ)(text);

/** the digit at i, NaN for any other character */
const digit = (s: string, i: number) => {
  const d = s.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : NaN;
};
const two = (s: string, i: number) => digit(s, i) * 10 + digit(s, i + 1);

/**
 * timestamptz as PostgreSQL writes it under DateStyle ISO, 'YYYY-MM-DD HH:MM:SS[.ffffff]±HH[:MM[:SS]]'
 * with a year from 100 to 9999, to the Date pg's own parser makes of it (milliseconds truncated, as
 * there). Anything else (BC, infinity, five- or two-digit years, another DateStyle) goes to pg's
 * parser itself.
 */
export function parseTimestamptz(s: string): unknown {
  const n = s.length;
  if (n < 22 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 32 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) {
    return pgTimestamptz(s);
  }
  const year = two(s, 0) * 100 + two(s, 2);
  let i = 19;
  let ms = 0;
  if (s.charCodeAt(i) === 46) {
    const from = ++i;
    while (i < n && i - from < 7 && digit(s, i) >= 0) i++;
    const count = i - from;
    if (count === 0 || count > 6) return pgTimestamptz(s);
    ms = digit(s, from) * 100 + (count > 1 ? digit(s, from + 1) * 10 : 0) + (count > 2 ? digit(s, from + 2) : 0);
  }
  const sign = s.charCodeAt(i);
  const zone = n - i;
  const zoneShape = zone === 3 || (zone === 6 && s.charCodeAt(i + 3) === 58) || (zone === 9 && s.charCodeAt(i + 3) === 58 && s.charCodeAt(i + 6) === 58);
  if ((sign !== 43 && sign !== 45) || !zoneShape || !(year >= 100)) return pgTimestamptz(s);
  let offset = two(s, i + 1) * 3600 + (zone > 3 ? two(s, i + 4) * 60 : 0) + (zone > 6 ? two(s, i + 7) : 0);
  if (sign === 45) offset = -offset;
  const utc = Date.UTC(year, two(s, 5) - 1, two(s, 8), two(s, 11), two(s, 14), two(s, 17), ms);
  // a non-digit anywhere made it NaN
  if (Number.isNaN(utc + offset)) return pgTimestamptz(s);
  return new Date(utc - offset * 1000);
}

/** Type parsers of the event reads (pg's per-query `types` option). */
const EVENT_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (text: string) => unknown {
    if (oid === INT8 || oid === XID8) return BigInt;
    if (oid === TIMESTAMPTZ) return parseTimestamptz;
    return pg.types.getTypeParser(oid, format ?? 'text') as (text: string) => unknown;
  },
};

// Events and positions are built by constructors whose prototype is Object.prototype: plain
// objects like those of a literal (same prototype, constructor, own enumerable fields in the same
// order), but with no allocation site. V8 pretenures a literal's allocation site once most of its
// objects survive (a consumer that keeps or buffers what it reads, as the bench's subscriber
// and the projection runner do): every later event was then allocated in the old generation, and
// the global read spent a quarter of its time in garbage collection (4.5 to 5.6 us of Node CPU
// per event against 2.8 to 3.1 us with constructors, bench/global-read.ts --retain).
const PlainPosition = function (this: Position, commit: bigint, prepare: bigint) {
  this.commit = commit;
  this.prepare = prepare;
} as unknown as new (commit: bigint, prepare: bigint) => Position;
PlainPosition.prototype = Object.prototype;

/** The event whose columns (COLUMNS, decoded) start at `at` in an array row. */
const PlainEvent = function (this: RecordedEvent, row: unknown[], at: number) {
  this.id = row[at + 4] as string;
  this.streamName = row[at + 2] as string;
  this.revision = row[at + 3] as bigint;
  this.position = new PlainPosition(row[at + 1] as bigint, row[at] as bigint);
  this.type = row[at + 5] as string;
  this.data = row[at + 6];
  this.metadata = row[at + 7] as RecordedEvent['metadata'];
  this.createdAt = row[at + 8] as Date;
} as unknown as new (row: unknown[], at: number) => RecordedEvent;
PlainEvent.prototype = Object.prototype;

function toRecorded(row: unknown[], at = 0): RecordedEvent {
  return new PlainEvent(row, at);
}

/** The fact of a row of READ_ALL_FACTS_SQL; a metadata without `occurredAt` reads as it would from a whole event. */
const PlainFact = function (this: RecordedFact, row: unknown[]) {
  this.streamName = row[2] as string;
  this.position = new PlainPosition(row[1] as bigint, row[0] as bigint);
  this.type = row[3] as string;
  this.data = row[4];
  this.metadata = new PlainOccurred(row[5] as string | null);
} as unknown as new (row: unknown[]) => RecordedFact;
PlainFact.prototype = Object.prototype;

const PlainOccurred = function (this: { occurredAt: string | undefined }, occurredAt: string | null) {
  this.occurredAt = occurredAt ?? undefined;
} as unknown as new (occurredAt: string | null) => RecordedFact['metadata'];
PlainOccurred.prototype = Object.prototype;

/** The global read: an index range scan on the primary key (transaction_id, position). */
export const READ_ALL_SQL = `SELECT ${COLUMNS} FROM events
  WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
    AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY events.transaction_id, events.position
  LIMIT $3`;

/**
 * readAllFacts: the global read's scan and visibility, five columns of the nine (no id, revision,
 * creation time, nor metadata but its `occurredAt`), and the stream prefix as a filter on the scan.
 * Half the Node time per event of the global read, and the server's too (no uuid, timestamptz and
 * metadata output), on the bench's log of pool events.
 */
export const READ_ALL_FACTS_SQL = `SELECT position, transaction_id, stream_name, event_type, data, metadata->>'occurredAt' FROM events
  WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
    AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
    AND ($4::text IS NULL OR starts_with(stream_name, $4))
  ORDER BY events.transaction_id, events.position
  LIMIT $3`;

function modeOf(expected: ExpectedRevision): [string, string | null] {
  return typeof expected === 'bigint' ? ['exact', expected.toString()] : [expected, null];
}

/** The arrays append_events and append_batch take per event: ids, types, data, metadata. */
function eventColumns(events: EventData[]): [string[], string[], string[], string[]] {
  return [
    events.map((e) => e.id ?? randomUUID()),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.data)),
    events.map((e) => JSON.stringify(e.metadata)),
  ];
}

interface AppendRow {
  next_revision: string;
  transaction_id: string;
  last_position: string;
}

function appendResultOf(row: AppendRow): AppendResult {
  return { nextRevision: BigInt(row.next_revision), position: { commit: BigInt(row.transaction_id), prepare: BigInt(row.last_position) } };
}

export interface PostgresEventStoreOptions {
  pool: Pool;
  /** connection string for the LISTEN connection; without it, subscribers of other processes rely on polling */
  connectionString?: string;
}

/**
 * The PostgreSQL adapter. Appends are one statement (append_events); readers see only rows of
 * transactions below their snapshot's xmin, ordered by (transaction_id, position).
 */
export function createPostgresEventStore(options: PostgresEventStoreOptions): EventStore {
  const { pool } = options;
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const notifier = coalescedNotifier(pool);
  const listener = options.connectionString ? sharedListener(options.connectionString, local) : undefined;

  async function currentRevision(streamName: string): Promise<bigint> {
    const { rows } = await pool.query<{ revision: string }>(
      'SELECT revision FROM events WHERE stream_name = $1 ORDER BY revision DESC LIMIT 1',
      [streamName],
    );
    return rows[0] ? BigInt(rows[0].revision) : -1n;
  }

  async function appendOnce(streamName: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult> {
    const [mode, exp] = modeOf(expected);
    try {
      const { rows } = await pool.query<AppendRow>({
        name: 'append-events',
        text: 'SELECT * FROM append_events($1, $2, $3, $4::uuid[], $5::text[], $6::jsonb[], $7::jsonb[])',
        values: [streamName, mode, exp, ...eventColumns(events)],
      });
      const result = appendResultOf(rows[0]!);
      notifier.notify(result.position.commit);
      return result;
    } catch (err) {
      const e = err as pg.DatabaseError;
      if (e.code === 'P0001' && e.message === 'wrong_expected_revision') {
        throw new ConcurrencyError(streamName, expected, BigInt(e.detail ?? '-1'));
      }
      if (e.code === '23505' && e.constraint === 'events_stream_revision') {
        throw new ConcurrencyError(streamName, expected, await currentRevision(streamName));
      }
      throw err;
    }
  }

  const batcher = appendBatcher(pool, appendOnce, (xid) => notifier.notify(xid));
  const reads = readCoalescer(pool);

  async function readAll({ fromPosition = START, maxCount }: ReadAllOptions): Promise<RecordedEvent[]> {
    const commit = fromPosition.commit < 0n ? '0' : fromPosition.commit.toString();
    const { rows } = await pool.query<unknown[]>({
      name: 'read-all',
      text: READ_ALL_SQL,
      values: [commit, fromPosition.prepare.toString(), maxCount],
      rowMode: 'array',
      types: EVENT_TYPES,
    });
    return rows.map((row) => toRecorded(row));
  }

  async function readAllFacts({ fromPosition = START, maxCount, streamPrefix }: ReadAllFactsOptions): Promise<RecordedFact[]> {
    const commit = fromPosition.commit < 0n ? '0' : fromPosition.commit.toString();
    const { rows } = await pool.query<unknown[]>({
      name: 'read-all-facts',
      text: READ_ALL_FACTS_SQL,
      values: [commit, fromPosition.prepare.toString(), maxCount, streamPrefix ?? null],
      rowMode: 'array',
      types: EVENT_TYPES,
    });
    return rows.map((row) => new PlainFact(row));
  }

  return {
    kind: 'postgres',

    async append(streamName, events, { expectedRevision }) {
      if (events.length === 0) throw new Error('append needs at least one event');
      // `any` cannot be wrong: a lost race on the revision is simply tried again.
      for (let attempt = 0; ; attempt++) {
        try {
          const result = await batcher.append(streamName, events, expectedRevision);
          local.emit('appended', result.position.commit);
          return result;
        } catch (err) {
          if (!(err instanceof ConcurrencyError) || expectedRevision !== 'any' || attempt >= 20) throw err;
        }
      }
    },

    async readStream(streamName: string, { fromRevision, direction = 'forwards', maxCount }: ReadStreamOptions = {}) {
      const backwards = direction === 'backwards';
      if (!backwards && maxCount === undefined) return reads.read(streamName, fromRevision ?? 0n);
      const from = fromRevision ?? (backwards ? null : 0n);
      const { rows } = await pool.query<unknown[]>({
        name: backwards ? 'read-stream-backwards' : 'read-stream',
        text: `SELECT ${COLUMNS} FROM events
          WHERE stream_name = $1 AND ($2::bigint IS NULL OR revision ${backwards ? '<=' : '>='} $2::bigint)
          ORDER BY revision ${backwards ? 'DESC' : 'ASC'}
          LIMIT $3`,
        values: [streamName, from === null ? null : from.toString(), maxCount ?? null],
        rowMode: 'array',
        types: EVENT_TYPES,
      });
      return rows.map((row) => toRecorded(row));
    },

    readAll,
    readAllFacts,

    subscribeAll({ fromPosition = START, ready }: SubscribeOptions = {}): Subscription {
      listener?.retain();
      return pollingSubscription(readAll, local, fromPosition, () => listener?.release(), ready);
    },

    async ping() {
      await pool.query('SELECT 1');
    },

    async close() {
      await listener?.close();
      await notifier.drain();
    },
  };
}

/**
 * An error the server raised for the statement, which it rolled back: severity ERROR, and not a
 * connection (08) or shutdown (57P0x) class, after which a commit may or may not have happened.
 */
function isStatementError(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.severity === 'ERROR' && !/^(08|57P0)/.test(err.code ?? '');
}

/** Stream reads in flight at most at once; reads asked for meanwhile wait and go together. */
const READS_IN_FLIGHT = 4;
const MAX_READ_BATCH = 100;

/**
 * Whole-stream reads (forwards, from a revision) asked for in the same tick, or while
 * READS_IN_FLIGHT reads are running, go as one statement: one index range scan per stream.
 */
function readCoalescer(pool: Pool) {
  type PendingRead = { streamName: string; from: bigint; resolve(events: RecordedEvent[]): void; reject(err: unknown): void };
  let queue: PendingRead[] = [];
  let inFlight = 0;
  let scheduled = false;

  async function send(batch: PendingRead[]): Promise<void> {
    try {
      const { rows } = await pool.query<unknown[]>({
        name: 'read-streams',
        text: `SELECT q.item, e.* FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS q(stream, from_revision, item)
          CROSS JOIN LATERAL (SELECT ${COLUMNS} FROM events
            WHERE stream_name = q.stream AND revision >= q.from_revision ORDER BY revision) e
          ORDER BY q.item, e.revision`,
        values: [batch.map((r) => r.streamName), batch.map((r) => r.from.toString())],
        rowMode: 'array',
        types: EVENT_TYPES,
      });
      const out: RecordedEvent[][] = batch.map(() => []);
      // the first column is the item (ordinality, a bigint), the event's columns follow
      for (const row of rows) out[Number(row[0]) - 1]!.push(toRecorded(row, 1));
      batch.forEach((r, i) => r.resolve(out[i]!));
    } catch (err) {
      // One read the server refuses (e.g. a NUL in a stream name) must not fail the others.
      if (batch.length > 1 && isStatementError(err)) await Promise.all(batch.map((r) => send([r])));
      else for (const r of batch) r.reject(err);
    }
  }

  function flush(): void {
    scheduled = false;
    while (queue.length && inFlight < READS_IN_FLIGHT) {
      const batch = queue.slice(0, MAX_READ_BATCH);
      queue = queue.slice(batch.length);
      inFlight++;
      void send(batch).finally(() => {
        inFlight--;
        flush();
      });
    }
  }

  return {
    read(streamName: string, from: bigint): Promise<RecordedEvent[]> {
      return new Promise((resolve, reject) => {
        queue.push({ streamName, from, resolve, reject });
        if (!scheduled && inFlight < READS_IN_FLIGHT) {
          scheduled = true;
          queueMicrotask(flush);
        }
      });
    },
  };
}

interface PendingAppend {
  streamName: string;
  events: EventData[];
  expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(err: unknown): void;
}

/** Appends per batch at most; a batch is one statement and one transaction. */
const MAX_BATCH_APPENDS = 64;
const MAX_BATCH_EVENTS = 1000;

/**
 * Group commit: appends made while a batch is in flight wait and go together in the next one
 * (append_batch: one round trip, one commit, each append checked and written on its own). An
 * append made while nothing is in flight goes at once, so a quiet service adds no latency. When
 * a batch fails as a whole (not a revision conflict: those are per append), each of its appends
 * is tried alone, so one bad append never fails the others.
 */
function appendBatcher(
  pool: Pool,
  appendAlone: (s: string, e: EventData[], x: ExpectedRevision) => Promise<AppendResult>,
  committed: (transactionId: bigint) => void,
) {
  let queue: PendingAppend[] = [];
  let inFlight = false;

  async function send(batch: PendingAppend[]): Promise<void> {
    // Sorted by stream (stable): batches in flight at once, from other processes, lock stream
    // revisions in the same order and cannot deadlock.
    const items = [...batch].sort((a, b) => (a.streamName < b.streamName ? -1 : a.streamName > b.streamName ? 1 : 0));
    const modes = items.map((p) => modeOf(p.expected));
    let rows: Array<{ item: number; next_revision: string | null; transaction_id: string | null; last_position: string | null; actual_revision: string | null }>;
    try {
      ({ rows } = await pool.query({
        name: 'append-batch',
        text: 'SELECT * FROM append_batch($1::text[], $2::text[], $3::bigint[], $4::int[], $5::uuid[], $6::text[], $7::jsonb[], $8::jsonb[])',
        values: [
          items.map((p) => p.streamName),
          modes.map(([mode]) => mode),
          modes.map(([, expected]) => expected),
          items.map((p) => p.events.length),
          ...eventColumns(items.flatMap((p) => p.events)),
        ],
      }));
    } catch (err) {
      // The server refused the batch and rolled it back (e.g. one append's data): each append
      // alone. A lost connection is different: the batch may have committed, so its appends
      // fail as they would alone, never tried again here (a retry could write them twice).
      if (items.length > 1 && isStatementError(err)) {
        await Promise.all(items.map((p) => appendAlone(p.streamName, p.events, p.expected).then(p.resolve, p.reject)));
      } else {
        for (const p of items) p.reject(err);
      }
      return;
    }
    const written = rows.find((row) => row.transaction_id !== null);
    if (written) committed(BigInt(written.transaction_id!));
    for (const row of rows) {
      const p = items[row.item - 1]!;
      if (row.actual_revision !== null) p.reject(new ConcurrencyError(p.streamName, p.expected, BigInt(row.actual_revision)));
      else p.resolve(appendResultOf(row as AppendRow));
    }
  }

  function take(): PendingAppend[] {
    let n = 0;
    let events = 0;
    while (n < queue.length && n < MAX_BATCH_APPENDS && (n === 0 || events + queue[n]!.events.length <= MAX_BATCH_EVENTS)) events += queue[n++]!.events.length;
    const batch = queue.slice(0, n);
    queue = queue.slice(n);
    return batch;
  }

  async function drain(): Promise<void> {
    inFlight = true;
    try {
      while (queue.length) {
        const batch = take();
        await send(batch).catch((err: unknown) => batch.forEach((p) => p.reject(err)));
      }
    } finally {
      inFlight = false;
    }
  }

  return {
    append(streamName: string, events: EventData[], expected: ExpectedRevision): Promise<AppendResult> {
      return new Promise<AppendResult>((resolve, reject) => {
        queue.push({ streamName, events, expected, resolve, reject });
        if (!inFlight) void drain();
      });
    },
  };
}

/**
 * NOTIFY after a commit, outside the appending transaction: a NOTIFY inside it would hold a
 * database-wide lock through the commit and serialise the commits of every process. At most one
 * in flight per store, and at most one every NOTIFY_GAP_MS: appends that land meanwhile share the
 * next one, whose payload is the highest transaction id among them. Subscribers in this process are
 * woken at once (locally); those of other processes at most NOTIFY_GAP_MS later, for one statement
 * per gap instead of one per append under load.
 */
const NOTIFY_GAP_MS = 10;

function coalescedNotifier(pool: Pool) {
  let inFlight: Promise<void> | null = null;
  let pending: bigint | null = null;
  let lastSent = 0;
  const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  const send = async (xid: bigint): Promise<void> => {
    const wait = lastSent + NOTIFY_GAP_MS - Date.now();
    if (wait > 0) await pause(wait);
    // What landed while this one waited goes with it.
    if (pending !== null && pending > xid) xid = pending;
    pending = null;
    lastSent = Date.now();
    await pool.query('SELECT pg_notify($1, $2)', [CHANNEL, xid.toString()]).then(
      () => undefined,
      () => undefined, // subscribers fall back to polling
    );
    if (pending !== null) {
      const next: bigint = pending;
      pending = null;
      inFlight = send(next);
      return inFlight;
    }
    inFlight = null;
  };
  return {
    notify(xid: bigint) {
      if (inFlight) pending = pending === null || xid > pending ? xid : pending;
      else inFlight = send(xid);
    },
    async drain() {
      while (inFlight) await inFlight;
    },
  };
}

/** The transaction id a NOTIFY carries; undefined for a payload this version did not send. */
function transactionIdOf(payload: string | undefined): bigint | undefined {
  return payload && /^[0-9]+$/.test(payload) ? BigInt(payload) : undefined;
}

/** One LISTEN connection per store, opened while at least one subscription is live. */
function sharedListener(connectionString: string, local: EventEmitter) {
  let users = 0;
  let client: pg.Client | null = null;
  const open = () => {
    const c = new pg.Client({ connectionString });
    client = c;
    c.on('notification', (message) => local.emit('appended', transactionIdOf(message.payload)));
    c.on('error', () => {
      if (client === c) client = null;
    });
    c.connect()
      .then(() => c.query(`LISTEN ${CHANNEL}`))
      .catch(() => {
        if (client === c) client = null;
      });
  };
  const closeClient = async () => {
    const c = client;
    client = null;
    await c?.end().catch(() => {});
  };
  return {
    retain() {
      users++;
      if (!client) open();
    },
    release() {
      users--;
      if (users === 0) void closeClient();
    },
    close: closeClient,
  };
}

/**
 * Catch-up and live in one loop: read after the last position until a short batch, then wait
 * for a wake-up (local append, NOTIFY) or the fallback poll. A wake-up names the appending
 * transaction; while that transaction's events are not yet visible (an older transaction still
 * holds the snapshot's xmin) the read is retried with a short backoff, and only then.
 */
function pollingSubscription(
  readAll: (o: ReadAllOptions) => Promise<RecordedEvent[]>,
  local: EventEmitter,
  fromPosition: Position,
  onClose: () => void,
  ready: () => Promise<void> = () => Promise.resolve(),
): Subscription {
  let closed = false;
  let wake: (() => void) | null = null;
  let woken = false;
  /** the highest transaction id a wake-up named, and when */
  let announced = -1n;
  let announcedAt = 0;
  const onAppended = (xid: bigint | undefined) => {
    // A transaction already announced (the NOTIFY echo of a local append) needs no second read.
    if (xid !== undefined) {
      if (xid <= announced) return;
      announced = xid;
      announcedAt = Date.now();
    }
    woken = true;
    wake?.();
  };
  local.on('appended', onAppended);

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  async function* iterate(): AsyncGenerator<RecordedEvent> {
    let position = fromPosition;
    let retryDelay = 0;
    while (!closed) {
      await ready();
      if (closed) return;
      woken = false;
      const batch = await readAll({ fromPosition: position, maxCount: SUBSCRIPTION_BATCH });
      for (const event of batch) {
        if (closed) return;
        position = event.position;
        yield event;
      }
      if (batch.length === SUBSCRIPTION_BATCH || closed || woken) {
        retryDelay = 0;
        continue;
      }
      // Events of a transaction that committed are visible once every older transaction ends:
      // our read position sits below it until then. Look again soon (1 to 5 ms) for a second
      // after the announcement; an older transaction open longer than that (a rebuild, an idle
      // session) is waited out with a backoff that grows to the fallback poll.
      if (position.commit < announced) {
        const fast = Date.now() - announcedAt < FAST_RETRY_WINDOW_MS;
        retryDelay = Math.min(retryDelay === 0 ? 1 : retryDelay * 2, fast ? 5 : FALLBACK_POLL_MS);
        await sleep(retryDelay);
        continue;
      }
      retryDelay = 0;
      await sleep(FALLBACK_POLL_MS);
    }
  }

  const generator = iterate();
  return {
    [Symbol.asyncIterator]: () => generator,
    async close() {
      if (closed) return;
      closed = true;
      local.off('appended', onAppended);
      wake?.();
      onClose();
      await generator.return(undefined);
    },
  };
}
