// Live reads from PostgreSQL: NOTIFY after commits (coalesced), one LISTEN connection per store,
// and the polling subscription that catches up and then follows the log.
import { randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Pool } from '../db.ts';
import type { Position, ReadAllOptions, RecordedEvent, Subscription } from './port.ts';

export const CHANNEL = 'events_appended';
const FALLBACK_POLL_MS = 500;
const FAST_RETRY_WINDOW_MS = 1000;
const SUBSCRIPTION_BATCH = 1000;

/**
 * A store's LISTEN connection names itself `events_listen:<token>` (its application_name), so an
 * appending process can tell from pg_stat_activity whether any other store of the database listens.
 * What it saw is used for LISTENERS_REFRESH_MS; a store that starts listening meanwhile is not told
 * for up to that long, so its subscriptions poll every NEWCOMER_POLL_MS until then (and a margin).
 */
const LISTENER_NAME_PREFIX = 'events_listen:';
export const LISTENERS_REFRESH_MS = 1000;
const NEWCOMER_WINDOW_MS = LISTENERS_REFRESH_MS + 500;
const NEWCOMER_POLL_MS = 20;

/** A store's own LISTEN connection name (one per store). */
export const listenerName = (): string => `${LISTENER_NAME_PREFIX}${randomUUID()}`;

/**
 * NOTIFY after a commit, outside the appending transaction: a NOTIFY inside it would hold a
 * database-wide lock through the commit and serialise the commits of every process. At most one
 * in flight per store, and at most one every NOTIFY_GAP_MS: appends that land meanwhile share the
 * next one, whose payload is the highest transaction id among them. Subscribers in this process are
 * woken at once (locally); those of other processes at most NOTIFY_GAP_MS later, for one statement
 * per gap instead of one per append under load.
 *
 * Only while a store other than this one (`ownListener`, its LISTEN connection's name) listens on the
 * database: a single process (`npm start`) wakes its subscribers locally, and a NOTIFY nobody hears
 * was a transaction of its own, 0.3 to 0.4 statements per write. Who listens is looked up at most
 * every LISTENERS_REFRESH_MS (one statement); a failed look-up counts as someone listening.
 */
const NOTIFY_GAP_MS = 10;

export function coalescedNotifier(pool: Pool, ownListener: string) {
  let inFlight: Promise<void> | null = null;
  let pending: bigint | null = null;
  let lastSent = 0;
  let othersListen = true;
  let lookedAt = Number.NEGATIVE_INFINITY;
  const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  const anotherListens = async (): Promise<boolean> => {
    if (performance.now() - lookedAt < LISTENERS_REFRESH_MS) return othersListen;
    // the time the look began: a listener that appears while the query runs is seen within the refresh after it
    const looking = performance.now();
    othersListen = await pool
      .query<{ others: boolean }>({
        name: 'events-listeners',
        text: `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
                 AND starts_with(application_name, $1) AND application_name <> $2) AS others`,
        values: [LISTENER_NAME_PREFIX, ownListener],
      })
      .then(
        ({ rows }) => rows[0]!.others,
        () => true,
      );
    lookedAt = looking;
    return othersListen;
  };
  const send = async (xid: bigint): Promise<void> => {
    const wait = lastSent + NOTIFY_GAP_MS - performance.now();
    if (wait > 0) await pause(wait);
    const heard = await anotherListens();
    // What landed while this one waited goes with it.
    if (pending !== null && pending > xid) xid = pending;
    pending = null;
    if (heard) {
      lastSent = performance.now();
      await pool.query('SELECT pg_notify($1, $2)', [CHANNEL, xid.toString()]).then(
        () => undefined,
        () => undefined, // subscribers fall back to polling
      );
    }
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

/**
 * One LISTEN connection per store, opened while at least one subscription is live, named `name`
 * (see LISTENER_NAME_PREFIX). `pollMs` is the subscriptions' fallback poll: short for the first
 * NEWCOMER_WINDOW_MS after the connection opens, while other stores may still think nobody listens.
 */
export function sharedListener(connectionString: string, local: EventEmitter, name: string) {
  let users = 0;
  let client: pg.Client | null = null;
  let openedAt = Number.NEGATIVE_INFINITY;
  const open = () => {
    const c = new pg.Client({ connectionString });
    client = c;
    openedAt = performance.now();
    c.on('notification', (message) => local.emit('appended', transactionIdOf(message.payload)));
    c.on('error', () => {
      if (client === c) client = null;
    });
    // The name is set by a statement, not the connection's options: an application_name in the
    // connection string overrides those, and the other stores would never see this one listen.
    // The newcomer's window starts once LISTEN is on.
    c.connect()
      .then(() => c.query("SELECT set_config('application_name', $1, false)", [name]))
      .then(() => c.query(`LISTEN ${CHANNEL}`))
      .then(() => {
        openedAt = performance.now();
      })
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
    pollMs: () => (performance.now() - openedAt < NEWCOMER_WINDOW_MS ? NEWCOMER_POLL_MS : FALLBACK_POLL_MS),
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
  pollMs: () => number = () => FALLBACK_POLL_MS,
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
      await sleep(pollMs());
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
