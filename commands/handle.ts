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

export async function load<State, Event extends DomainEvent>(
  store: EventStore,
  streamName: string,
  folder: Folder<State, Event>,
): Promise<Loaded<State>> {
  const recorded = await store.readStream(streamName);
  let state = folder.initialState();
  for (const e of recorded) state = folder.evolve(state, e as unknown as RecordedEvent & Event);
  return { state, revision: recorded.length ? recorded[recorded.length - 1]!.revision : -1n };
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
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = await load(store, streamName, folder);
    const events = decide(state, revision);
    if (events.length === 0) return { events, state };
    const metadata = metadataOf(ctx);
    try {
      const result = await store.append(
        streamName,
        events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })),
        { expectedRevision: revision === -1n ? 'no_stream' : revision },
      );
      return { events, state: events.reduce(folder.evolve, state), position: result.position };
    } catch (err) {
      if (!(err instanceof ConcurrencyError)) throw err;
      if (attempt >= MAX_ATTEMPTS) throw conflict(`${streamName} is changing too fast; try again`);
    }
  }
}
