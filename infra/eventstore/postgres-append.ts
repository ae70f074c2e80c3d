// Appending to PostgreSQL: the arrays the append functions take, their results, and the group
// commit of concurrent appends (appendBatcher).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Pool } from '../db.ts';
import { ConcurrencyError, type AppendResult, type EventData, type ExpectedRevision } from './port.ts';

export function modeOf(expected: ExpectedRevision): [string, string | null] {
  return typeof expected === 'bigint' ? ['exact', expected.toString()] : [expected, null];
}

/** The arrays append_events and append_batch take per event: ids, types, data, metadata. */
export function eventColumns(events: EventData[]): [string[], string[], string[], string[]] {
  return [
    events.map((e) => e.id ?? randomUUID()),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.data)),
    events.map((e) => JSON.stringify(e.metadata)),
  ];
}

export interface AppendRow {
  next_revision: string;
  transaction_id: string;
  last_position: string;
}

export function appendResultOf(row: AppendRow): AppendResult {
  return { nextRevision: BigInt(row.next_revision), position: { commit: BigInt(row.transaction_id), prepare: BigInt(row.last_position) } };
}

/**
 * An error the server raised for the statement, which it rolled back: severity ERROR, and not a
 * connection (08) or shutdown (57P0x) class, after which a commit may or may not have happened.
 */
export function isStatementError(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.severity === 'ERROR' && !/^(08|57P0)/.test(err.code ?? '');
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
export function appendBatcher(
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
    let rows: Array<{
      item: number;
      next_revision: string | null;
      transaction_id: string | null;
      last_position: string | null;
      actual_revision: string | null;
    }>;
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
        await send(batch).catch((err: unknown) => {
          for (const p of batch) p.reject(err);
        });
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
