// Reading events from PostgreSQL: the columns, their fast decoding, the global reads' SQL and the
// coalesced whole-stream reads. The store (postgres.ts) puts them together.
import pg from 'pg';
import type { Pool } from '../db.ts';
import type { Position, RecordedEntry, RecordedEvent, RecordedFact } from './port.ts';
import { isStatementError } from './postgres-append.ts';

// The event reads (global, stream, coalesced streams) take rows as arrays, decoded while they
// stream in by the type parsers of EVENT_TYPES (this query's only; nothing global changes):
// int8 and xid8 straight to bigint, jsonb by pg's own parser, timestamptz by a fast path for
// PostgreSQL's ISO output that gives the Date pg's parser gives and hands anything else to it.
// pg's row objects, its regex date parser and the text cast of the transaction id were most of the
// client's time and a seventh of the server's in the global read, the spine of every read model.
// The transaction id arrives as xid8's own output (its digits); ordering uses the xid8 column
// itself, never text (as text, "100000" sorts before "99999").
export const COLUMNS = 'position, transaction_id, stream_name, revision, event_id, event_type, data, metadata, created_at';

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
export const EVENT_TYPES = {
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
} as unknown as new (
  commit: bigint,
  prepare: bigint,
) => Position;
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
} as unknown as new (
  row: unknown[],
  at: number,
) => RecordedEvent;
PlainEvent.prototype = Object.prototype;

export function toRecorded(row: unknown[], at = 0): RecordedEvent {
  return new PlainEvent(row, at);
}

/** The fact of a row of READ_ALL_FACTS_SQL; a metadata without `occurredAt` reads as it would from a whole event. */
export const PlainFact = function (this: RecordedFact, row: unknown[]) {
  this.streamName = row[2] as string;
  this.position = new PlainPosition(row[1] as bigint, row[0] as bigint);
  this.type = row[3] as string;
  this.data = row[4];
  this.metadata = new PlainOccurred(row[5] as string | null);
} as unknown as new (
  row: unknown[],
) => RecordedFact;
PlainFact.prototype = Object.prototype;

const PlainOccurred = function (this: { occurredAt: string | undefined }, occurredAt: string | null) {
  this.occurredAt = occurredAt ?? undefined;
} as unknown as new (
  occurredAt: string | null,
) => RecordedFact['metadata'];
PlainOccurred.prototype = Object.prototype;

/**
 * The entry of a row of READ_STREAM_ENTRIES_SQL in the stream `streamName`: the stream's name is the
 * one asked for (not a column), the time the metadata's `occurredAt` or else the creation time as
 * the database writes it in ISO (to the millisecond, truncated, as a Date parsed from it would say).
 */
export const PlainEntry = function (this: RecordedEntry, row: unknown[], streamName: string) {
  this.streamName = streamName;
  this.position = new PlainPosition(row[1] as bigint, row[0] as bigint);
  this.type = row[3] as string;
  this.data = row[4];
  this.metadata = new PlainOccurred(row[5] as string | null);
  this.id = row[2] as string;
  this.time = (row[5] ?? row[6]) as string;
} as unknown as new (
  row: unknown[],
  streamName: string,
) => RecordedEntry;
PlainEntry.prototype = Object.prototype;

/**
 * readStreamEntries: one stream's index range scan, six columns of the nine and the creation time
 * only where no `occurredAt` stands for it. The metadata's other fields, the revision, the stream's
 * name and the creation time were more than half of a whole-stream read's Node time.
 */
const ENTRY_COLUMNS = `position, transaction_id, event_id, event_type, data, metadata->>'occurredAt',
    CASE WHEN metadata->>'occurredAt' IS NULL THEN to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END`;

export const READ_STREAM_ENTRIES_SQL = `SELECT ${ENTRY_COLUMNS}
  FROM events WHERE stream_name = $1 AND revision >= $2::bigint ORDER BY revision`;

/** The global read: an index range scan on the primary key (transaction_id, position). */
export const READ_ALL_SQL = `SELECT ${COLUMNS} FROM events
  WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
    AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY events.transaction_id, events.position
  LIMIT $3`;

/** readAllPages: the global read, with the stream prefix as a filter on the scan (null: every stream), as entries (PlainEntry, the stream's name last). */
export const READ_ALL_PAGE_SQL = `SELECT ${ENTRY_COLUMNS}, stream_name
  FROM events
  WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
    AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
    AND ($4::text IS NULL OR starts_with(stream_name, $4))
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

/** Stream reads in flight at most at once; reads asked for meanwhile wait and go together. */
const READS_IN_FLIGHT = 4;
const MAX_READ_BATCH = 100;

/**
 * Whole-stream reads (forwards, from a revision) asked for in the same tick, or while
 * READS_IN_FLIGHT reads are running, go as one statement: one index range scan per stream.
 */
export function readCoalescer(pool: Pool) {
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
      batch.forEach((r, i) => {
        r.resolve(out[i]!);
      });
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
