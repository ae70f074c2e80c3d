// One in-memory event log with the store port's write rule (append with the expected revision)
// and stream reads, for property tests that run the real command code on many schedules quickly.
// Each `view` is a store object of its own over the shared log: give each its own dispatcher (each
// dispatcher owns its command room, the cache and the single-writer queues), and each view acts as
// one service process. `around`
// wraps every read and append of a view (a scheduler decides when it happens and when its caller
// sees the result; a dying process throws).
import { ConcurrencyError, entryOf, type EventData, type EventStore, type RecordedEvent } from '../../infra/eventstore/port.ts';

export class MemoryLog {
  private readonly streams = new Map<string, RecordedEvent[]>();
  private sequence = 0n;

  /** How many events the log holds: a step that appends nothing leaves it as it was. */
  get size(): number {
    return Number(this.sequence);
  }

  read(streamName: string, fromRevision = 0n): RecordedEvent[] {
    return (this.streams.get(streamName) ?? []).slice(Number(fromRevision));
  }

  /** Every stream whose name starts with `prefix`, with its events. */
  streamsOf(prefix: string): Array<[string, RecordedEvent[]]> {
    return [...this.streams].filter(([name]) => name.startsWith(prefix));
  }

  append(streamName: string, events: EventData[], expectedRevision: bigint | 'no_stream' | 'any' | 'stream_exists') {
    const stream = this.streams.get(streamName) ?? [];
    const actual = BigInt(stream.length) - 1n;
    const ok =
      expectedRevision === 'any' ||
      (expectedRevision === 'no_stream' && stream.length === 0) ||
      (expectedRevision === 'stream_exists' && stream.length > 0) ||
      expectedRevision === actual;
    if (!ok) throw new ConcurrencyError(streamName, expectedRevision, actual);
    for (const e of events) {
      this.sequence += 1n;
      stream.push({
        id: e.id ?? `e-${this.sequence}`,
        streamName,
        revision: BigInt(stream.length),
        position: { commit: this.sequence, prepare: this.sequence },
        type: e.type,
        data: structuredClone(e.data),
        metadata: e.metadata,
        createdAt: new Date(0),
      });
    }
    this.streams.set(streamName, stream);
    const last = stream[stream.length - 1]!;
    return { nextRevision: last.revision, position: last.position };
  }

  /** A store over this log, as one process sees it; `around` runs each call (default: at once). */
  view(around: <T>(what: string, call: () => T) => Promise<T> = async (_, call) => call()): EventStore {
    const unsupported = () => {
      throw new Error('the in-memory log reads streams only');
    };
    return {
      kind: 'postgres',
      append: (name, events, { expectedRevision }) => around(`append ${name}`, () => this.append(name, events, expectedRevision)),
      readStream: (name, options = {}) => around(`read ${name}`, () => this.read(name, options.fromRevision)),
      readStreamEntries: (name, options = {}) => around(`read ${name}`, () => this.read(name, options.fromRevision).map(entryOf)),
      readAll: unsupported,
      readAllFacts: unsupported,
      readAllPages: unsupported,
      subscribeAll: unsupported,
      ping: async () => undefined,
      close: async () => undefined,
    };
  }
}
