import { EventEmitter } from 'node:events';
import type pg from 'pg';
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
  type RecordedEntry,
  type RecordedEvent,
  type RecordedFact,
  type SubscribeOptions,
  type Subscription,
} from './port.ts';
import { appendBatcher, appendResultOf, eventColumns, modeOf, type AppendRow } from './postgres-append.ts';
import { coalescedNotifier, listenerName, pollingSubscription, sharedListener } from './postgres-live.ts';
import { pagesOf } from './paging.ts';
import {
  COLUMNS,
  EVENT_TYPES,
  PlainEntry,
  PlainFact,
  READ_ALL_FACTS_SQL,
  READ_ALL_PAGE_SQL,
  READ_ALL_SQL,
  READ_STREAM_ENTRIES_SQL,
  readCoalescer,
  toRecorded,
} from './postgres-reads.ts';

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
  const ownListener = listenerName();
  const notifier = coalescedNotifier(pool, ownListener);
  const listener = options.connectionString ? sharedListener(options.connectionString, local, ownListener) : undefined;

  async function currentRevision(streamName: string): Promise<bigint> {
    const { rows } = await pool.query<{ revision: string }>('SELECT revision FROM events WHERE stream_name = $1 ORDER BY revision DESC LIMIT 1', [streamName]);
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

  async function readPage(after: Position, maxCount: number, streamPrefix: string | undefined): Promise<RecordedEntry[]> {
    const { rows } = await pool.query<unknown[]>({
      name: 'read-all-page',
      text: READ_ALL_PAGE_SQL,
      values: [after.commit < 0n ? '0' : after.commit.toString(), after.prepare.toString(), maxCount, streamPrefix ?? null],
      rowMode: 'array',
      types: EVENT_TYPES,
    });
    return rows.map((row) => new PlainEntry(row, row[7] as string));
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

    async readStreamEntries(streamName: string, { fromRevision = 0n }: { fromRevision?: bigint } = {}) {
      const { rows } = await pool.query<unknown[]>({
        name: 'read-stream-entries',
        text: READ_STREAM_ENTRIES_SQL,
        values: [streamName, fromRevision.toString()],
        rowMode: 'array',
        types: EVENT_TYPES,
      });
      return rows.map((row) => new PlainEntry(row, streamName));
    },

    readAll,
    readAllFacts,
    readAllPages: (options) => pagesOf(readPage, options),

    subscribeAll({ fromPosition = START, ready }: SubscribeOptions = {}): Subscription {
      listener?.retain();
      return pollingSubscription(readAll, local, fromPosition, () => listener?.release(), ready, listener?.pollMs);
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
