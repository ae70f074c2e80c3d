import { randomUUID } from 'node:crypto';
import type { DomainEvent } from '../domain/shared/decider.ts';
import { conflict, DomainError } from '../domain/shared/errors.ts';
import { commandsTotal } from '../infra/metrics.ts';
import {
  ConcurrencyError,
  type EventMetadata,
  type EventStore,
  type Position,
  type RecordedEvent,
} from '../infra/eventstore/port.ts';

/** Who asked and when: every command carries it, every event keeps it. */
export interface CommandContext {
  correlationId: string;
  causationId?: string;
  /** user id, API key id or `system:<worker>` */
  actor: string;
  now: Date;
}

export interface Folder<State, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
}

export interface Loaded<State> {
  state: State;
  /** -1n when the stream does not exist */
  revision: bigint;
}

export interface HandleResult<State, Event extends DomainEvent> {
  events: Event[];
  /** state after the new events */
  state: State;
  /** global position of the last appended event; undefined when nothing was appended */
  position?: Position;
}

export function metadataOf(ctx: CommandContext): EventMetadata {
  return {
    correlationId: ctx.correlationId,
    ...(ctx.causationId ? { causationId: ctx.causationId } : {}),
    actor: ctx.actor,
    occurredAt: ctx.now.toISOString(),
  };
}

/**
 * The states this process last saw, per store, folder and stream: a load reads only the events
 * after the cached revision (streams are append-only with dense revisions, so the result equals a
 * full read), and a command may decide on the cached state without reading at all, because its
 * append carries the expected revision (see decideAndAppend). Bounded, least recently used first out.
 */
const CACHE_ENTRIES = 20_000;
const caches = new WeakMap<EventStore, Map<string, Loaded<unknown>>>();
const folderIds = new WeakMap<object, number>();
let folderCount = 0;

function cacheOf(store: EventStore): Map<string, Loaded<unknown>> {
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = new Map()));
  return cache;
}

function cacheKey(folder: object, streamName: string): string {
  let id = folderIds.get(folder);
  if (id === undefined) folderIds.set(folder, (id = ++folderCount));
  return `${id}:${streamName}`;
}

function cached<State>(store: EventStore, folder: object, streamName: string): Loaded<State> | undefined {
  const cache = cacheOf(store);
  const key = cacheKey(folder, streamName);
  const entry = cache.get(key);
  if (entry) {
    cache.delete(key);
    cache.set(key, entry);
  }
  return entry as Loaded<State> | undefined;
}

/** Keeps the newer of the cached and the given state (concurrent loads may finish out of order). */
function remember<State>(store: EventStore, folder: object, streamName: string, loaded: Loaded<State>): void {
  const cache = cacheOf(store);
  const key = cacheKey(folder, streamName);
  const current = cache.get(key);
  if (current && current.revision >= loaded.revision) return;
  cache.delete(key);
  cache.set(key, loaded);
  if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
}

/** The stream's current state: the cached state caught up with the events after it. */
export async function load<State, Event extends DomainEvent>(
  store: EventStore,
  streamName: string,
  folder: Folder<State, Event>,
): Promise<Loaded<State>> {
  const known = cached<State>(store, folder, streamName);
  const recorded = await store.readStream(streamName, known ? { fromRevision: known.revision + 1n } : {});
  if (known && recorded.length === 0) return known;
  let state = known ? known.state : folder.initialState();
  for (const e of recorded) state = folder.evolve(state, e as unknown as RecordedEvent & Event);
  const loaded = { state, revision: recorded.length ? recorded[recorded.length - 1]!.revision : -1n };
  remember(store, folder, streamName, loaded);
  return loaded;
}

const MAX_ATTEMPTS = 5;

/**
 * Load, decide, append with the expected revision. A concurrency conflict reloads and decides
 * again: `decide` is pure and sees the newer state, so a retry can never apply a stale decision.
 * When the conflict outlasts the attempts it is a 409, never a silent loss.
 */
export async function handle<State, Event extends DomainEvent>(
  store: EventStore,
  streamName: string,
  folder: Folder<State, Event>,
  decide: (state: State, revision: bigint) => Event[],
  ctx: CommandContext,
): Promise<HandleResult<State, Event>> {
  const aggregate = streamName.split('-', 1)[0]!;
  try {
    const result = await decideAndAppend(store, streamName, folder, decide, ctx);
    commandsTotal.inc({ aggregate, outcome: result.events.length ? 'appended' : 'unchanged' });
    return result;
  } catch (err) {
    commandsTotal.inc({ aggregate, outcome: err instanceof DomainError ? 'rejected' : 'failed' });
    throw err;
  }
}

async function decideAndAppend<State, Event extends DomainEvent>(
  store: EventStore,
  streamName: string,
  folder: Folder<State, Event>,
  decide: (state: State, revision: bigint) => Event[],
  ctx: CommandContext,
): Promise<HandleResult<State, Event>> {
  // The first attempt may decide on the cached state without a read: an append made on a stale
  // state fails its expected revision and is decided again on a fresh load. A refusal or a no-op
  // is only ever answered from a fresh load, since a stale state could refuse wrongly.
  let unverified = cached<State>(store, folder, streamName);
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = unverified ?? (await load(store, streamName, folder));
    let events: Event[] = [];
    try {
      events = decide(state, revision);
    } catch (err) {
      if (!(unverified && err instanceof DomainError)) throw err;
    }
    const fromCache = unverified !== undefined;
    unverified = undefined;
    if (events.length === 0) {
      if (!fromCache) return { events, state };
      attempt--; // a refusal or a no-op on the cached state: decide again on a fresh load
      continue;
    }
    const metadata = metadataOf(ctx);
    try {
      const result = await store.append(
        streamName,
        events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })),
        { expectedRevision: revision === -1n ? 'no_stream' : revision },
      );
      const next = events.reduce(folder.evolve, state);
      remember(store, folder, streamName, { state: next, revision: result.nextRevision });
      return { events, state: next, position: result.position };
    } catch (err) {
      if (!(err instanceof ConcurrencyError)) throw err;
      if (attempt >= MAX_ATTEMPTS) throw conflict(`${streamName} is changing too fast; try again`);
    }
  }
}
