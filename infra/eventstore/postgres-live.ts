// Live reads from PostgreSQL: NOTIFY after commits (coalesced), one LISTEN connection per store,
// and the polling subscription that catches up and then follows the log.
import type { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Pool } from '../db.ts';
import type { Position, ReadAllOptions, RecordedEvent, Subscription } from './port.ts';

export const CHANNEL = 'events_appended';
const FALLBACK_POLL_MS = 500;
const FAST_RETRY_WINDOW_MS = 1000;
const SUBSCRIPTION_BATCH = 1000;

/**
 * NOTIFY after a commit, outside the appending transaction: a NOTIFY inside it would hold a
 * database-wide lock through the commit and serialise the commits of every process. At most one
 * in flight per store, and at most one every NOTIFY_GAP_MS: appends that land meanwhile share the
 * next one, whose payload is the highest transaction id among them. Subscribers in this process are
 * woken at once (locally); those of other processes at most NOTIFY_GAP_MS later, for one statement
 * per gap instead of one per append under load.
 */
const NOTIFY_GAP_MS = 10;

export function coalescedNotifier(pool: Pool) {
  let inFlight: Promise<void> | null = null;
  let pending: bigint | null = null;
  let lastSent = 0;
  const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  const send = async (xid: bigint): Promise<void> => {
    const wait = lastSent + NOTIFY_GAP_MS - performance.now();
    if (wait > 0) await pause(wait);
    // What landed while this one waited goes with it.
    if (pending !== null && pending > xid) xid = pending;
    pending = null;
    lastSent = performance.now();
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
export function sharedListener(connectionString: string, local: EventEmitter) {
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
export function pollingSubscription(
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
      announcedAt = performance.now();
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
        const fast = performance.now() - announcedAt < FAST_RETRY_WINDOW_MS;
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
