// EventStoreDB / KurrentDB adapter of the event-store port, through the official gRPC client.
import { randomUUID } from 'node:crypto';
import {
  ANY,
  BACKWARDS,
  END,
  ErrorType,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START as ESDB_START,
  STREAM_EXISTS,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type JSONType,
  type Position as EsdbPosition,
  type RecordedEvent as EsdbRecordedEvent,
  type ResolvedEvent,
} from '@eventstore/db-client';
import {
  comparePositions,
  ConcurrencyError,
  entryOf,
  type AppendResult,
  type EventData,
  type EventMetadata,
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
import { pagesOf } from './paging.ts';

/** How many $all events one readAll round trip asks for at least (system events are skipped client-side). */
const MIN_ALL_BATCH = 64;
/** A uint64 -1: how a server may report "no commit position" on a stream read. */
const NO_COMMIT = (1n << 64n) - 1n;

function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'any':
      return ANY;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      return expected;
  }
}

function isStart(position: Position | undefined): boolean {
  return !position || position.commit < 0n;
}

function toPosition(position: EsdbPosition | undefined): Position {
  if (!position) throw new Error('EventStoreDB returned an event without a position');
  // commit == prepare for events written by a gRPC append; a missing commit takes the prepare.
  const commit = position.commit === NO_COMMIT ? position.prepare : position.commit;
  return { commit, prepare: position.prepare };
}

function isSystemType(type: string): boolean {
  return type.startsWith('$');
}

function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
  return {
    id: event.id,
    streamName: event.streamId,
    revision: event.revision,
    position: toPosition(event.position),
    type: event.type,
    data: event.data,
    metadata: event.metadata as unknown as EventMetadata,
    createdAt: event.created,
  };
}

function toFact(event: EsdbRecordedEvent): RecordedFact {
  const { occurredAt } = event.metadata as unknown as EventMetadata;
  return { streamName: event.streamId, position: toPosition(event.position), type: event.type, data: event.data, metadata: { occurredAt } };
}

function isWrongExpectedVersion(err: unknown): err is { actualVersion: bigint | 'no_stream' } {
  return typeof err === 'object' && err !== null && (err as { type?: unknown }).type === ErrorType.WRONG_EXPECTED_VERSION;
}

function isStreamNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { type?: unknown }).type === ErrorType.STREAM_NOT_FOUND;
}

export function createEsdbEventStore(connectionString: string): EventStore {
  const client = EventStoreDBClient.connectionString(connectionString);
  const subscriptions = new Set<Subscription>();

  async function readStreamRaw(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const direction = options.direction ?? 'forwards';
    const fromRevision = options.fromRevision ?? (direction === 'forwards' ? ESDB_START : END);
    const out: RecordedEvent[] = [];
    try {
      const read = client.readStream(streamName, {
        fromRevision,
        direction: direction === 'forwards' ? FORWARDS : BACKWARDS,
        maxCount: options.maxCount ?? Number.MAX_SAFE_INTEGER,
      });
      for await (const resolved of read as AsyncIterable<ResolvedEvent>) {
        if (resolved.event) out.push(toRecorded(resolved.event as EsdbRecordedEvent));
      }
    } catch (err) {
      if (isStreamNotFound(err)) return [];
      throw err;
    }
    return out;
  }

  async function append(streamName: string, events: EventData[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    const proposed = events.map((e) =>
      jsonEvent({
        id: e.id ?? randomUUID(),
        type: e.type,
        data: e.data as JSONType,
        metadata: e.metadata as unknown as JSONType,
      }),
    );
    let result: Awaited<ReturnType<typeof client.appendToStream>>;
    try {
      result = await client.appendToStream(streamName, proposed, {
        expectedRevision: toEsdbExpected(options.expectedRevision),
      });
    } catch (err) {
      if (isWrongExpectedVersion(err)) {
        const actual = err.actualVersion === 'no_stream' ? -1n : err.actualVersion;
        throw new ConcurrencyError(streamName, options.expectedRevision, actual);
      }
      throw err;
    }
    const nextRevision = result.nextExpectedRevision;
    if (events.length === 1 && result.position) {
      return { nextRevision, position: toPosition(result.position) };
    }
    // For a multi-event write (or one the server reports without a position) take the last
    // event's own position: revisions are immutable, so this is exact whoever writes next.
    const [last] = await readStreamRaw(streamName, { fromRevision: nextRevision, maxCount: 1 });
    if (!last || last.revision !== nextRevision) {
      throw new Error(`EventStoreDB: cannot read back ${streamName}@${nextRevision} after appending`);
    }
    return { nextRevision, position: last.position };
  }

  /** $all after `fromPosition`: up to `maxCount` of the events `wanted` keeps (never a system event), as `as` makes them. */
  async function readAllOf<T>(
    { fromPosition, maxCount }: ReadAllOptions,
    wanted: (e: EsdbRecordedEvent) => boolean,
    as: (e: EsdbRecordedEvent) => T,
  ): Promise<T[]> {
    const out: T[] = [];
    let from = fromPosition;
    while (out.length < maxCount) {
      // +1: a read from a position includes the event at it, which is not wanted (exclusive).
      const batch = Math.max(maxCount - out.length + 1, MIN_ALL_BATCH);
      let received = 0;
      let last: Position | undefined;
      const read = client.readAll({ fromPosition: isStart(from) ? ESDB_START : from!, maxCount: batch, direction: FORWARDS });
      for await (const resolved of read as AsyncIterable<AllStreamResolvedEvent>) {
        received += 1;
        const event = resolved.event;
        if (!event) continue;
        const position = toPosition(event.position);
        last = position;
        if (!isStart(from) && comparePositions(position, from!) <= 0) continue;
        if (isSystemType(event.type) || !wanted(event as EsdbRecordedEvent)) continue;
        if (out.length < maxCount) out.push(as(event as EsdbRecordedEvent));
      }
      if (received < batch || !last) break; // end of the log
      from = last;
    }
    return out;
  }

  const readAll = (options: ReadAllOptions) => readAllOf(options, () => true, toRecorded);
  // This client reads $all without a server-side filter (it has one for subscriptions only): the
  // prefix is applied here, so the other streams' events still travel and are skipped on arrival.
  const readAllFacts = ({ streamPrefix, ...options }: ReadAllFactsOptions) =>
    readAllOf(options, streamPrefix === undefined ? () => true : (e) => e.streamId.startsWith(streamPrefix), toFact);

  function subscribeAll(options: SubscribeOptions = {}): Subscription {
    const from = options.fromPosition;
    const sub = client.subscribeToAll({
      fromPosition: isStart(from) ? ESDB_START : from!,
      filter: excludeSystemEvents(),
    });
    let closed = false;
    async function* iterate(): AsyncGenerator<RecordedEvent> {
      try {
        for await (const resolved of sub as AsyncIterable<AllStreamResolvedEvent>) {
          if (closed) return;
          const event = resolved.event;
          if (!event || isSystemType(event.type)) continue;
          const recorded = toRecorded(event as EsdbRecordedEvent);
          // The server starts after the position; checked again so a resume never repeats an event.
          if (!isStart(from) && comparePositions(recorded.position, from!) <= 0) continue;
          yield recorded;
        }
      } catch (err) {
        if (!closed) throw err;
      } finally {
        await subscription.close();
      }
    }
    const iterator = iterate();
    const subscription: Subscription = {
      [Symbol.asyncIterator]: () => iterator,
      async close() {
        if (closed) return;
        closed = true;
        subscriptions.delete(subscription);
        // A stream whose call never opened (its channel failed) has nothing to cancel: the
        // client's unsubscribe then rejects with that failure, which the reader has already seen.
        await sub.unsubscribe().catch(() => {});
        // Ends a pending iteration: the client's stream does not end by itself on unsubscribe.
        sub.destroy();
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  return {
    kind: 'esdb',
    append,
    readStream: readStreamRaw,
    readStreamEntries: async (streamName, options = {}) => (await readStreamRaw(streamName, { fromRevision: options.fromRevision })).map(entryOf),
    readAll,
    readAllFacts,
    readAllPages: (options) =>
      pagesOf(
        (fromPosition, maxCount, prefix) =>
          readAllOf({ fromPosition, maxCount }, prefix === undefined ? () => true : (e) => e.streamId.startsWith(prefix), (e) => entryOf(toRecorded(e))),
        options,
      ),
    subscribeAll,
    async ping() {
      const read = client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1 });
      for await (const _ of read as AsyncIterable<AllStreamResolvedEvent>) void _;
    },
    async close() {
      await Promise.all([...subscriptions].map((s) => s.close()));
      await client.dispose();
    },
  };
}
