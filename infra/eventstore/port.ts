// The one event-store port every part of the service uses. Two adapters implement it:
// PostgreSQL (postgres.ts, the default) and EventStoreDB (esdb.ts).

/** `no_stream`: the stream must not exist; `stream_exists`: it must; `any`: no check; a bigint: its last revision. */
export type ExpectedRevision = 'no_stream' | 'any' | 'stream_exists' | bigint;

/**
 * A place in the global log. Ordering is lexicographic on (commit, prepare).
 * PostgreSQL: commit = the appending transaction's id (xid8), prepare = the row's sequence.
 * EventStoreDB: the server's own commit and prepare positions.
 */
export interface Position {
  commit: bigint;
  prepare: bigint;
}

export const START: Position = Object.freeze({ commit: -1n, prepare: -1n });

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

export interface EventMetadata {
  correlationId: string;
  causationId?: string;
  /** user id, API key id or `system:<worker>` */
  actor: string;
  occurredAt: string;
  [key: string]: unknown;
}

export interface EventData<T extends string = string, D = unknown> {
  /** uuid; generated when absent. A retry with the same ids is idempotent on EventStoreDB. */
  id?: string;
  type: T;
  data: D;
  metadata: EventMetadata;
}

export interface RecordedEvent<T extends string = string, D = unknown> {
  id: string;
  streamName: string;
  revision: bigint;
  position: Position;
  type: T;
  data: D;
  metadata: EventMetadata;
  createdAt: Date;
}

/**
 * An event as a pass that folds the log's facts reads it (readAllFacts): where it is, what it
 * says and when it happened; a RecordedEvent is one too.
 */
export interface RecordedFact<T extends string = string, D = unknown> {
  streamName: string;
  position: Position;
  type: T;
  data: D;
  metadata: Pick<EventMetadata, 'occurredAt'>;
}

/**
 * An event as a fold of one stream's history reads it (readStreamEntries): a fact with its id and
 * when it happened, `time`: its metadata's `occurredAt`, else the time the store recorded it (ISO).
 */
export interface RecordedEntry<T extends string = string, D = unknown> extends RecordedFact<T, D> {
  id: string;
  time: string;
}

/** A whole event's entry (the adapters that read whole events, and test stores). */
export function entryOf(event: RecordedEvent): RecordedEntry {
  const { occurredAt } = event.metadata;
  return {
    streamName: event.streamName,
    position: event.position,
    type: event.type,
    data: event.data,
    metadata: { occurredAt },
    id: event.id,
    time: occurredAt ?? event.createdAt.toISOString(),
  };
}

export interface AppendResult {
  /** revision of the last event written */
  nextRevision: bigint;
  /** global position of the last event written */
  position: Position;
}

export interface ReadStreamOptions {
  fromRevision?: bigint;
  direction?: 'forwards' | 'backwards';
  maxCount?: number;
}

export interface ReadAllOptions {
  /** exclusive: events strictly after this position; START (default) reads from the first event */
  fromPosition?: Position;
  maxCount: number;
}

export interface ReadAllFactsOptions extends ReadAllOptions {
  /** only the events of streams whose name starts with it (maxCount counts those) */
  streamPrefix?: string;
}

/** readAllPages: the global log in pages, from a position, optionally only some streams' events. */
export interface ReadPagesOptions {
  /** exclusive, like readAll */
  fromPosition?: Position;
  /** events per page, from 1 to MAX_PAGE_SIZE (paging.ts); the last page may hold fewer */
  pageSize: number;
  /** only the events of streams whose name starts with it */
  streamPrefix?: string;
}

export interface Subscription extends AsyncIterable<RecordedEvent> {
  /** Stops the subscription; a pending iteration ends. */
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /** exclusive, like readAll */
  fromPosition?: Position;
  /**
   * Resolves when the consumer has room for more: a store that polls reads no sooner, so a
   * consumer busy with what it has is not fed many small reads meanwhile (a store that pushes
   * events ignores it).
   */
  ready?: () => Promise<void>;
}

export interface EventStore {
  readonly kind: 'postgres' | 'esdb';
  append(streamName: string, events: EventData[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult>;
  /** Empty array when the stream does not exist. */
  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /**
   * The whole stream, oldest first, as readStream reads it, with only what folding its history
   * needs (readStream's events as entryOf makes them): a statement's replay of a pool of 10,000
   * events reads and decodes a fraction of what readStream would (no revision, creation time nor
   * metadata but its `occurredAt`). Empty array when the stream does not exist. With `fromRevision`,
   * the events from that revision on (inclusive): a statement resumed from a snapshot of its fold.
   */
  readStreamEntries(streamName: string, options?: { fromRevision?: bigint }): Promise<RecordedEntry[]>;
  /** Global order; never skips an event that commits late. */
  readAll(options: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * readAll's events, in its order and at its positions, with only what folding them needs, and
   * only those of `streamPrefix`'s streams when given: a pass over the whole log that folds one
   * kind of stream (the auditors' replay) reads and decodes a fraction of what readAll would.
   */
  readAllFacts(options: ReadAllFactsOptions): Promise<RecordedFact[]>;
  /**
   * readAll's events in its order, one page at a time as the consumer asks for them: a pass over
   * the whole log that writes what it reads as it goes (the exports) holds one page, whatever the
   * log's length. Each event as an entry (readStreamEntries' fields): what an exported row says.
   */
  readAllPages(options: ReadPagesOptions): AsyncIterable<RecordedEntry[]>;
  /** Catches up from `fromPosition`, then follows live appends, each event exactly once, in readAll order. */
  subscribeAll(options?: SubscribeOptions): Subscription;
  /** Health probe. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A wrong expected revision. `actualRevision` is -1n when the stream does not exist. */
export class ConcurrencyError extends Error {
  readonly code = 'CONCURRENCY_CONFLICT';
  constructor(
    readonly streamName: string,
    readonly expectedRevision: ExpectedRevision,
    readonly actualRevision: bigint,
  ) {
    super(`wrong expected revision on ${streamName}: expected ${String(expectedRevision)}, actual ${actualRevision}`);
    this.name = 'ConcurrencyError';
  }
}
