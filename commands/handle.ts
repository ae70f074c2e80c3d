// One stream, one decision: load (cached), decide, append with the expected revision. Inside a
// process a stream has a single writer (a keyed queue), so commands on one stream never race each
// other; across processes a lost race is decided again on fresh state, with jittered backoff, until
// the command's deadline; past it the command is refused as BUSY having appended nothing.
import type { CommandMetadata, DomainEvent } from '../domain/shared/decider.ts';
import { DomainError, InvariantViolation, refuse } from '../domain/shared/errors.ts';
import { assertStorable } from '../domain/shared/storable-text.ts';
import { systemDeadlineClock, type DeadlineClock } from '../infra/clock.ts';
import type { Ids } from '../infra/ids.ts';
import { commandsTotal } from '../infra/metrics.ts';
import { ConcurrencyError, type EventMetadata, type EventStore, type Position, type RecordedEvent } from '../infra/eventstore/port.ts';

export interface Folder<State, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
}

export interface Loaded<State> {
  state: State;
  /** -1n when the stream does not exist */
  revision: bigint;
  /** global position of the stream's last event; undefined when it has none */
  position?: Position;
  /** epoch ms when this state was last known to be the stream's latest (read, or appended by this process) */
  verifiedAt?: number;
}

export interface Decided<State, Event extends DomainEvent> extends Loaded<State> {
  /** the events appended; empty when the decision changed nothing */
  events: Event[];
}

export interface HandleOptions {
  metadata: CommandMetadata;
  ids: Ids;
  /** epoch ms: a decision still losing races then is refused as BUSY */
  deadline: number;
  /**
   * The stream is most likely new (its id was just derived, e.g. a trade's): a first decision with
   * nothing cached is taken on the initial state without a read, appended as `no_stream`; a stream
   * that exists after all fails that append and is decided again on a fresh load.
   */
  likelyNew?: boolean;
}

export function eventMetadataOf(metadata: CommandMetadata): EventMetadata {
  return {
    correlationId: metadata.correlationId,
    ...(metadata.causationId ? { causationId: metadata.causationId } : {}),
    actor: metadata.actor,
    occurredAt: metadata.now.toISOString(),
  };
}

/**
 * The command room of one process and store: the states this process last saw (the state cache),
 * the keyed queue that makes it each stream's single writer, and the clock its deadlines are
 * read on. The dispatcher owns one (commands/dispatch.ts); everything that reads or decides on
 * streams beside it goes through the same room, so they share its cache and queues.
 */
export interface CommandRoom {
  readonly store: EventStore;
  /** the real time in epoch ms: deadlines, backoff, the cache's freshness (never business time) */
  readonly clock: DeadlineClock;
  /**
   * The stream's current state: the cached state caught up with the events after it. `cachedOnly`:
   * the state this process last saw without reading, when it has one: for a command's answer (the
   * state its own append left, as an UPDATE … RETURNING would give it), never for a decision.
   * `maxStaleMs`: a state this process verified that recently, without a read.
   */
  load<State, Event extends DomainEvent>(
    streamName: string,
    folder: Folder<State, Event>,
    options?: { cachedOnly?: boolean; maxStaleMs?: number },
  ): Promise<Loaded<State>>;
  /**
   * Load, decide, append with the expected revision, as this stream's single writer. A lost race
   * (another process appended) is decided again on the newer state: `decide` is pure, so a retry
   * can never apply a stale decision.
   */
  handle<State, Event extends DomainEvent>(
    streamName: string,
    folder: Folder<State, Event>,
    decide: (state: State, revision: bigint) => Event[],
    options: HandleOptions,
  ): Promise<Decided<State, Event>>;
  /**
   * Work under one key runs one after another. Stream names are keys (the single writer per
   * stream); other keys (`claim:…`) serialise a multi-stream step, and never look like a stream name.
   */
  serialized<T>(key: string, run: () => Promise<T>): Promise<T>;
}

/**
 * The state cache: per folder and stream, the state last seen. A load reads only the events after
 * the cached revision (streams are append-only with dense revisions, so the result equals a full
 * read), and a decision may be taken on the cached state without reading at all, because its append
 * carries the expected revision. Bounded, least recently used first out.
 */
const CACHE_ENTRIES = 20_000;

function createStateCache(entries: number) {
  const cache = new Map<string, Loaded<unknown>>();
  const folderIds = new WeakMap<object, number>();
  let folderCount = 0;
  const keyOf = (folder: object, streamName: string): string => {
    let id = folderIds.get(folder);
    if (id === undefined) folderIds.set(folder, (id = ++folderCount));
    return `${id}:${streamName}`;
  };
  return {
    get<State>(folder: object, streamName: string): Loaded<State> | undefined {
      const key = keyOf(folder, streamName);
      const entry = cache.get(key);
      if (entry) {
        cache.delete(key);
        cache.set(key, entry);
      }
      return entry as Loaded<State> | undefined;
    },
    /**
     * Keeps the newer of the cached and the given state (concurrent loads may finish out of order);
     * `reverified`: the same revision read again, so its verification time moves on.
     */
    remember<State>(folder: object, streamName: string, loaded: Loaded<State>, reverified = false): void {
      const key = keyOf(folder, streamName);
      const current = cache.get(key);
      if (current && (current.revision > loaded.revision || (current.revision === loaded.revision && !reverified))) return;
      cache.delete(key);
      cache.set(key, loaded);
      if (cache.size > entries) cache.delete(cache.keys().next().value!);
    },
  };
}

function createWriterQueues() {
  const queue = new Map<string, Promise<unknown>>();
  return <T>(key: string, run: () => Promise<T>): Promise<T> => {
    const previous = queue.get(key);
    const result = previous ? previous.then(run, run) : run();
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    queue.set(key, tail);
    void tail.then(() => {
      if (queue.get(key) === tail) queue.delete(key);
    });
    return result;
  };
}

const BACKOFF_FIRST_MS = 2;
const BACKOFF_MAX_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Full jitter: a random wait up to an exponentially growing bound, never past the deadline. */
function backoffMs(attempt: number, msLeft: number): number {
  const bound = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.min(attempt, 10));
  return Math.max(0, Math.min(Math.random() * bound, msLeft));
}

/**
 * The events as decided, refused (MALFORMED_REQUEST naming the field) when their data holds text PostgreSQL
 * cannot store: checked before the append on both stores, since EventStoreDB would record it and
 * the projectors could then not write it into the read models.
 */
export function storable<Event extends DomainEvent>(events: Event[]): Event[] {
  for (const event of events) assertStorable(event.data);
  return events;
}

export function createCommandRoom(store: EventStore, options: { clock?: DeadlineClock; cacheEntries?: number } = {}): CommandRoom {
  const clock = options.clock ?? systemDeadlineClock;
  const cache = createStateCache(options.cacheEntries ?? CACHE_ENTRIES);
  const serialized = createWriterQueues();

  async function load<State, Event extends DomainEvent>(
    streamName: string,
    folder: Folder<State, Event>,
    options: { cachedOnly?: boolean; maxStaleMs?: number } = {},
  ): Promise<Loaded<State>> {
    const known = cache.get<State>(folder, streamName);
    if (known && options.cachedOnly) return known;
    if (known && options.maxStaleMs !== undefined && clock.nowMs() - (known.verifiedAt ?? 0) <= options.maxStaleMs) return known;
    const readAt = clock.nowMs();
    const recorded = await store.readStream(streamName, known ? { fromRevision: known.revision + 1n } : {});
    if (known && recorded.length === 0) {
      const verified = { ...known, verifiedAt: readAt };
      cache.remember(folder, streamName, verified, true);
      return verified;
    }
    let state = known ? known.state : folder.initialState();
    for (const e of recorded) state = folder.evolve(state, e as unknown as RecordedEvent & Event);
    const last = recorded[recorded.length - 1];
    const loaded = last ? { state, revision: last.revision, position: last.position, verifiedAt: readAt } : { state, revision: -1n, verifiedAt: readAt };
    cache.remember(folder, streamName, loaded);
    return loaded;
  }

  async function decideAndAppend<State, Event extends DomainEvent>(
    streamName: string,
    folder: Folder<State, Event>,
    decide: (state: State, revision: bigint) => Event[],
    { metadata, ids, deadline, likelyNew }: HandleOptions,
  ): Promise<Decided<State, Event>> {
    // The first attempt may decide on the cached state without a read (or on the initial state, for a
    // stream most likely new): an append made on a stale state fails its expected revision and is decided
    // again on a fresh load. A refusal or a no-op is only ever answered from a fresh load, since a stale
    // state could refuse wrongly (or look impossible).
    let unverified: Loaded<State> | undefined =
      cache.get<State>(folder, streamName) ?? (likelyNew ? { state: folder.initialState(), revision: -1n } : undefined);
    for (let conflicts = 0; ; ) {
      const loaded = unverified ?? (await load(streamName, folder));
      const fromCache = unverified !== undefined;
      unverified = undefined;
      let events: Event[];
      try {
        events = storable(decide(loaded.state, loaded.revision));
      } catch (err) {
        if (fromCache && (err instanceof DomainError || err instanceof InvariantViolation)) continue;
        throw err;
      }
      if (events.length === 0) {
        if (fromCache) continue;
        return { ...loaded, events };
      }
      const eventMetadata = eventMetadataOf(metadata);
      try {
        const result = await store.append(
          streamName,
          events.map((e) => ({ id: ids.uuid(), type: e.type, data: e.data, metadata: eventMetadata })),
          { expectedRevision: loaded.revision === -1n ? 'no_stream' : loaded.revision },
        );
        const next = { state: events.reduce(folder.evolve, loaded.state), revision: result.nextRevision, position: result.position, verifiedAt: clock.nowMs() };
        cache.remember(folder, streamName, next);
        return { ...next, events };
      } catch (err) {
        if (!(err instanceof ConcurrencyError)) throw err;
        const msLeft = deadline - clock.nowMs();
        if (msLeft <= 0) {
          throw refuse('BUSY', 'too many concurrent changes to the same records: nothing was changed; retry shortly', { retryAfterSeconds: 1 });
        }
        await sleep(backoffMs(++conflicts, msLeft));
      }
    }
  }

  return {
    store,
    clock,
    load,
    serialized,
    async handle(streamName, folder, decide, options) {
      const aggregate = streamName.split('-', 1)[0]!;
      try {
        const result = await serialized(streamName, () => decideAndAppend(streamName, folder, decide, options));
        commandsTotal.inc({ aggregate, outcome: result.events.length ? 'appended' : 'unchanged' });
        return result;
      } catch (err) {
        const outcome = err instanceof DomainError ? (err.reason === 'BUSY' ? 'busy' : 'rejected') : 'failed';
        commandsTotal.inc({ aggregate, outcome });
        throw err;
      }
    },
  };
}
