// Helpers for the event-store contract suite (contract.ts).
import { randomBytes, randomUUID } from 'node:crypto';
import type t from 'tap';
import {
  comparePositions,
  ConcurrencyError,
  type EventData,
  type EventStore,
  type Position,
  type RecordedEvent,
  type Subscription,
} from '../../../infra/eventstore/port.ts';

/** A tap test object: the root `t` or a subtest's. */
export type TapTest = Parameters<Parameters<typeof t.test>[0]>[0];

/** A stream name no other test run can share. */
export function uniq(prefix: string): string {
  return `contract_${prefix}-${Date.now().toString(36)}${randomBytes(5).toString('hex')}`;
}

export function ev(type: string, data: unknown = {}, extra: Partial<EventData> = {}): EventData {
  return {
    id: randomUUID(),
    type,
    data,
    metadata: { correlationId: randomUUID(), actor: 'system:contract', occurredAt: new Date().toISOString() },
    ...extra,
  };
}

/** A position at the start of a test: everything the test writes afterwards is strictly after it. */
export async function mark(store: EventStore): Promise<Position> {
  const r = await store.append(uniq('mark'), [ev('ContractMarked')], { expectedRevision: 'no_stream' });
  return r.position;
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads a subscription with a deadline per event, so a missing event fails instead of hanging. */
export class SubReader {
  readonly iterator: AsyncIterator<RecordedEvent>;
  /** every event received, in order */
  readonly received: RecordedEvent[] = [];

  constructor(readonly subscription: Subscription) {
    this.iterator = subscription[Symbol.asyncIterator]();
  }

  async next(ms = 15_000): Promise<RecordedEvent> {
    const r = await withTimeout(this.iterator.next(), ms, 'waiting for a subscription event');
    if (r.done) throw new Error('subscription ended unexpectedly');
    this.received.push(r.value);
    return r.value;
  }

  /** Reads until `count` events of the given streams arrived; returns those events. */
  async take(streams: Set<string>, count: number, ms = 30_000): Promise<RecordedEvent[]> {
    const mine: RecordedEvent[] = [];
    const deadline = Date.now() + ms;
    while (mine.length < count) {
      const e = await this.next(Math.max(1, deadline - Date.now()));
      if (streams.has(e.streamName)) mine.push(e);
    }
    return mine;
  }
}

/** Strictly increasing under comparePositions (the port's global order). */
export function strictlyIncreasing(events: RecordedEvent[]): boolean {
  return events.every((e, i) => i === 0 || comparePositions(events[i - 1]!.position, e.position) < 0);
}

export function summary(events: RecordedEvent[]): Array<[string, string, bigint]> {
  return events.map((e) => [e.streamName, e.type, e.revision]);
}

/** Resolves to the ConcurrencyError a promise rejects with (fails the test otherwise). */
export async function concurrencyError(t: TapTest, promise: Promise<unknown>, what: string): Promise<ConcurrencyError> {
  try {
    await promise;
  } catch (err) {
    t.ok(err instanceof ConcurrencyError, `${what}: rejects with ConcurrencyError`, { found: err });
    if (err instanceof ConcurrencyError) {
      t.equal(err.code, 'CONCURRENCY_CONFLICT', `${what}: code`);
      return err;
    }
    throw err;
  }
  t.fail(`${what}: should have been rejected`);
  throw new Error(`${what}: no ConcurrencyError`);
}

/**
 * readAll from `from` until `count` events of `streams` are visible (or the deadline passes).
 * The port does not promise read-your-writes on $all: the PostgreSQL store hides a committed
 * event while an older transaction is still open anywhere in the cluster, so that no reader
 * ever skips it. Visibility only grows at the end of the log, so later reads extend earlier ones.
 */
export async function readAllUntil(store: EventStore, from: Position, streams: Set<string>, count: number, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const all = await store.readAll({ fromPosition: from, maxCount: 10_000 });
    const mine = all.filter((e) => streams.has(e.streamName));
    if (mine.length >= count || Date.now() > deadline) return { all, mine };
    await delay(20);
  }
}

/** Pages through readAll with a small maxCount until a short page (the end of the log). */
export async function pageAll(store: EventStore, from: Position, maxCount: number, maxPages = 10_000) {
  const pages: RecordedEvent[][] = [];
  let position = from;
  for (let i = 0; i < maxPages; i++) {
    const page = await store.readAll({ fromPosition: position, maxCount });
    pages.push(page);
    if (page.length < maxCount) break;
    position = page[page.length - 1]!.position;
  }
  return pages;
}
