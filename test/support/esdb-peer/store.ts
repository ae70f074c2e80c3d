// The peer's in-memory transaction log, with EventStoreDB's write and read rules.
//
// Positions: every event is one prepare record in a byte-addressed log. Its position is the
// record's offset, and commit == prepare, as a single node reports for events written by
// the gRPC append (implicitly committed prepares). Offsets grow by a size derived from the
// record's content, so positions are large, strictly increasing and never consecutive
// integers (code that does `position + 1` breaks here as it would on a real server).
// An append's reported position is the last written event's position.

export interface StoredEvent {
  /** lowercase uuid */
  id: string;
  streamName: string;
  revision: bigint;
  /** log offset; commit == prepare */
  position: bigint;
  type: string;
  contentType: string;
  data: Uint8Array;
  metadata: Uint8Array;
  /** .NET ticks (100 ns) since the Unix epoch */
  created: bigint;
}

export interface ProposedEvent {
  id: string;
  type: string;
  contentType: string;
  data: Uint8Array;
  metadata: Uint8Array;
}

export type Expected = { kind: 'any' } | { kind: 'no_stream' } | { kind: 'stream_exists' } | { kind: 'revision'; revision: bigint };

export type AppendOutcome =
  | { ok: true; idempotent: boolean; currentRevision: bigint | undefined; position: bigint | undefined }
  | { ok: false; currentRevision: bigint | undefined };

export interface PeerStoreOptions {
  /** After every n appends, write a `$statsCollected` event, as a server's stats collector does. 0 = never. */
  systemEventEvery?: number;
}

const HEADER_BYTES = 98n;
/** The log opens with an epoch record, which is not an event: the first event sits after it. */
const FIRST_POSITION = 128n;

export class PeerStore {
  readonly log: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  private readonly byId = new Map<string, StoredEvent>();
  private readonly listeners = new Set<() => void>();
  private tail = FIRST_POSITION;
  private appends = 0;
  private tickCounter = 0n;

  constructor(private readonly options: PeerStoreOptions = {}) {
    // What a fresh single node writes before any user event.
    this.writeSystem('$settings', '$settings', { $userStreamAcl: {}, $systemStreamAcl: {} });
    this.writeSystem('$users', '$User', 'admin');
    this.writeSystem('$user-admin', '$UserCreated', { loginName: 'admin', fullName: 'Event Store Administrator' });
    this.writeSystem('$projections-$all', '$ProjectionsInitialized', {});
  }

  /** Last revision of a stream; undefined when the stream does not exist. */
  lastRevision(streamName: string): bigint | undefined {
    const events = this.streams.get(streamName);
    return events && events.length > 0 ? events[events.length - 1]!.revision : undefined;
  }

  /**
   * EventStoreDB's commit check (IndexWriter.CheckCommit): exact-revision and no_stream writes
   * that repeat already written ids at the same revisions are idempotent; `any` (and
   * `stream_exists`) writes whose ids are already in the stream are idempotent; a partial
   * repeat is reported as a wrong expected version.
   */
  append(streamName: string, expected: Expected, events: ProposedEvent[]): AppendOutcome {
    const current = this.lastRevision(streamName);
    const existing = this.streams.get(streamName) ?? [];
    let expectedRevision: bigint | 'any';
    switch (expected.kind) {
      case 'stream_exists':
        if (current === undefined) return { ok: false, currentRevision: undefined };
        expectedRevision = 'any';
        break;
      case 'any':
        expectedRevision = 'any';
        break;
      case 'no_stream':
        expectedRevision = -1n;
        break;
      case 'revision':
        expectedRevision = expected.revision;
        break;
    }
    const currentOrMinusOne = current ?? -1n;

    if (expectedRevision === 'any') {
      const found = events.map((e) => this.byId.get(e.id));
      const first = found[0];
      if (first && first.streamName === streamName) {
        if (found.every((f) => f && f.streamName === streamName)) {
          return this.idempotent(found[found.length - 1]!);
        }
        return { ok: false, currentRevision: current };
      }
      return this.write(streamName, events);
    }
    if (expectedRevision < currentOrMinusOne) {
      let matched = 0;
      for (const [i, e] of events.entries()) {
        const at = existing[Number(expectedRevision + 1n) + i];
        if (!at || at.id !== e.id) break;
        matched += 1;
      }
      if (matched === events.length && matched > 0) return this.idempotent(existing[Number(expectedRevision) + matched]!);
      return { ok: false, currentRevision: current };
    }
    if (expectedRevision > currentOrMinusOne) return { ok: false, currentRevision: current };
    return this.write(streamName, events);
  }

  /** Events of one stream; undefined when the stream does not exist. */
  readStream(streamName: string, from: bigint | 'start' | 'end', direction: 'forwards' | 'backwards', count: bigint): StoredEvent[] | undefined {
    const events = this.streams.get(streamName);
    if (!events || events.length === 0) return undefined;
    const last = events.length - 1;
    const max = count > BigInt(events.length) ? events.length : Number(count);
    if (direction === 'forwards') {
      const start = from === 'start' ? 0 : from === 'end' ? events.length : Number(from > BigInt(events.length) ? BigInt(events.length) : from);
      return events.slice(start, start + max);
    }
    const start = from === 'end' ? last : from === 'start' ? 0 : Number(from > BigInt(last) ? BigInt(last) : from);
    return events.slice(Math.max(0, start - max + 1), start + 1).reverse();
  }

  /** Index in the log of the first event whose position is >= position. */
  indexAtOrAfter(position: bigint): number {
    let lo = 0;
    let hi = this.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.log[mid]!.position < position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index in the log of the first event whose position is > position. */
  indexAfter(position: bigint): number {
    const i = this.indexAtOrAfter(position);
    return i < this.log.length && this.log[i]!.position === position ? i + 1 : i;
  }

  /** Called after every write; returns an unsubscribe function. */
  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private idempotent(last: StoredEvent): AppendOutcome {
    return { ok: true, idempotent: true, currentRevision: last.revision, position: last.position };
  }

  private write(streamName: string, events: ProposedEvent[]): AppendOutcome {
    if (events.length === 0) {
      // The server accepts an empty write as a no-op that reports the current revision.
      return { ok: true, idempotent: false, currentRevision: this.lastRevision(streamName), position: undefined };
    }
    let last: StoredEvent | undefined;
    for (const e of events) last = this.record(streamName, e);
    this.appends += 1;
    const every = this.options.systemEventEvery ?? 0;
    if (every > 0 && this.appends % every === 0 && !streamName.startsWith('$')) {
      this.writeSystem('$stats-127.0.0.1:2113', '$statsCollected', { 'proc-id': process.pid, 'es-queue-count': 0 });
    }
    this.notify();
    return { ok: true, idempotent: false, currentRevision: last!.revision, position: last!.position };
  }

  private record(streamName: string, e: ProposedEvent): StoredEvent {
    let events = this.streams.get(streamName);
    if (!events) {
      events = [];
      this.streams.set(streamName, events);
    }
    const stored: StoredEvent = {
      ...e,
      streamName,
      revision: BigInt(events.length),
      position: this.tail,
      created: this.nowTicks(),
    };
    const size = HEADER_BYTES + BigInt(Buffer.byteLength(streamName) + Buffer.byteLength(e.type) + e.data.length + e.metadata.length);
    this.tail += size + 8n; // length prefix and suffix, as in a TF chunk
    events.push(stored);
    this.log.push(stored);
    this.byId.set(stored.id, stored);
    return stored;
  }

  private writeSystem(streamName: string, type: string, data: unknown): void {
    this.record(streamName, {
      id: crypto.randomUUID(),
      type,
      contentType: 'application/json',
      data: Buffer.from(JSON.stringify(data)),
      metadata: new Uint8Array(),
    });
    this.notify();
  }

  private nowTicks(): bigint {
    // Milliseconds are what a client can decode; the sub-millisecond part only keeps ticks unique.
    this.tickCounter = (this.tickCounter + 1n) % 10_000n;
    return BigInt(Date.now()) * 10_000n + this.tickCounter;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
