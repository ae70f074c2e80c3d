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
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from './port.ts';

const CHANNEL = 'events_appended';
const FALLBACK_POLL_MS = 500;
const AFTER_WAKE_WINDOW_MS = 1000;
const SUBSCRIPTION_BATCH = 1000;

interface EventRow {
  position: string;
  tx_text: string;
  stream_name: string;
  revision: string;
  event_id: string;
  event_type: string;
  data: unknown;
  metadata: RecordedEvent['metadata'];
  created_at: Date;
}

// The transaction id travels as text (xid8 has no JS type) under its own name: ordering must use
// the xid8 column itself, never the text (as text, "100000" sorts before "99999").
const COLUMNS = 'position, transaction_id::text AS tx_text, stream_name, revision, event_id, event_type, data, metadata, created_at';

/** The global read: an index range scan on the primary key (transaction_id, position). */
export const READ_ALL_SQL = `SELECT ${COLUMNS} FROM events
  WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
    AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY events.transaction_id, events.position
  LIMIT $3`;

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamName: row.stream_name,
    revision: BigInt(row.revision),
    position: { commit: BigInt(row.tx_text), prepare: BigInt(row.position) },
    type: row.event_type,
    data: row.data,
    metadata: row.metadata,
    createdAt: row.created_at,
  };
}

function modeOf(expected: ExpectedRevision): [string, string | null] {
  return typeof expected === 'bigint' ? ['exact', expected.toString()] : [expected, null];
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
      const { rows } = await pool.query<{ next_revision: string; transaction_id: string; last_position: string }>({
        name: 'append-events',
        text: 'SELECT * FROM append_events($1, $2, $3, $4::uuid[], $5::text[], $6::jsonb[], $7::jsonb[])',
        values: [
          streamName,
          mode,
          exp,
          events.map((e) => e.id ?? randomUUID()),
          events.map((e) => e.type),
          events.map((e) => JSON.stringify(e.data)),
          events.map((e) => JSON.stringify(e.metadata)),
        ],
      });
      const row = rows[0]!;
      return {
        nextRevision: BigInt(row.next_revision),
        position: { commit: BigInt(row.transaction_id), prepare: BigInt(row.last_position) },
      };
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

  async function readAll({ fromPosition = START, maxCount }: ReadAllOptions): Promise<RecordedEvent[]> {
    const commit = fromPosition.commit < 0n ? '0' : fromPosition.commit.toString();
    const { rows } = await pool.query<EventRow>({ name: 'read-all', text: READ_ALL_SQL, values: [commit, fromPosition.prepare.toString(), maxCount] });
    return rows.map(toRecorded);
  }

  return {
    kind: 'postgres',

    async append(streamName, events, { expectedRevision }) {
      if (events.length === 0) throw new Error('append needs at least one event');
      // `any` cannot be wrong: a lost race on the revision is simply tried again.
      for (let attempt = 0; ; attempt++) {
        try {
          const result = await appendOnce(streamName, events, expectedRevision);
          local.emit('appended');
          notifier.notify();
          return result;
        } catch (err) {
          if (!(err instanceof ConcurrencyError) || expectedRevision !== 'any' || attempt >= 20) throw err;
        }
      }
    },

    async readStream(streamName: string, { fromRevision, direction = 'forwards', maxCount }: ReadStreamOptions = {}) {
      const backwards = direction === 'backwards';
      const from = fromRevision ?? (backwards ? null : 0n);
      const { rows } = await pool.query<EventRow>({
        name: backwards ? 'read-stream-backwards' : 'read-stream',
        text: `SELECT ${COLUMNS} FROM events
          WHERE stream_name = $1 AND ($2::bigint IS NULL OR revision ${backwards ? '<=' : '>='} $2::bigint)
          ORDER BY revision ${backwards ? 'DESC' : 'ASC'}
          LIMIT $3`,
        values: [streamName, from === null ? null : from.toString(), maxCount ?? null],
      });
      return rows.map(toRecorded);
    },

    readAll,

    subscribeAll({ fromPosition = START }: SubscribeOptions = {}): Subscription {
      listener?.retain();
      return pollingSubscription(readAll, local, fromPosition, () => listener?.release());
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

/** At most one NOTIFY in flight per store; appends that land meanwhile share the next one. */
function coalescedNotifier(pool: Pool) {
  let inFlight: Promise<void> | null = null;
  let dirty = false;
  const send = (): Promise<void> =>
    pool
      .query(`SELECT pg_notify('${CHANNEL}', '')`)
      .then(
        () => undefined,
        () => undefined, // subscribers fall back to polling
      )
      .then(() => {
        if (dirty) {
          dirty = false;
          inFlight = send();
          return inFlight;
        }
        inFlight = null;
      });
  return {
    notify() {
      if (inFlight) dirty = true;
      else inFlight = send();
    },
    async drain() {
      while (inFlight) await inFlight;
    },
  };
}

/** One LISTEN connection per store, opened while at least one subscription is live. */
function sharedListener(connectionString: string, local: EventEmitter) {
  let users = 0;
  let client: pg.Client | null = null;
  const open = () => {
    const c = new pg.Client({ connectionString });
    client = c;
    c.on('notification', () => local.emit('appended'));
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
 * for a wake-up (local append, NOTIFY) or the fallback poll. A wake-up that finds nothing yet
 * visible (an older transaction still holds the snapshot's xmin) is retried with a short backoff.
 */
function pollingSubscription(
  readAll: (o: ReadAllOptions) => Promise<RecordedEvent[]>,
  local: EventEmitter,
  fromPosition: Position,
  onClose: () => void,
): Subscription {
  let closed = false;
  let wake: (() => void) | null = null;
  let woken = false;
  const onAppended = () => {
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
    let lastWakeAt = 0;
    let retryDelay = 0;
    while (!closed) {
      if (woken) lastWakeAt = Date.now();
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
      // Shortly after a wake-up, an append may still be hidden behind an older open transaction:
      // look again soon rather than at the next fallback poll.
      if (Date.now() - lastWakeAt < AFTER_WAKE_WINDOW_MS) {
        retryDelay = Math.min(retryDelay === 0 ? 1 : retryDelay * 2, 5);
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
