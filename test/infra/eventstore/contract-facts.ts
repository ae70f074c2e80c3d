// The event-store contract of readAllFacts, readAllPages and readStreamEntries (registered by contract.ts, so every adapter passes it).
import { MAX_PAGE_SIZE, streamPages } from '../../../infra/eventstore/paging.ts';
import { entryOf, type EventStore, type Position, type RecordedEntry, type RecordedEvent, type RecordedFact } from '../../../infra/eventstore/port.ts';
import { ev, mark, readAllUntil, uniq, type TapTest } from './contract-helpers.ts';

/** A fact as the contract compares it, whichever read gave it. */
const asFact = (e: RecordedFact) => ({ streamName: e.streamName, position: e.position, type: e.type, data: e.data, occurredAt: e.metadata.occurredAt });

export function readAllFactsContract(t: TapTest, store: EventStore): void {
  t.test("readAllFacts: readAll's events of the streams with a prefix, at its positions, with type, data and time", async (t) => {
    const from = await mark(store);
    const prefix = `${uniq('facts')}-`;
    // one character off, where the prefix has a `_`: the prefix is matched as it is, not as a pattern
    const [a, b, other] = [`${prefix}a`, `${prefix}b`, `${prefix.replace('_', 'X')}a`];
    const occurredAt = '2025-03-01T10:00:00.000Z';
    await store.append(a, [ev('A0', { n: 0 }), ev('A1', { n: 1 })], { expectedRevision: 'no_stream' });
    await store.append(other, [ev('O0', { n: 2 })], { expectedRevision: 'no_stream' });
    await store.append(b, [ev('B0', { nested: { list: [1, 'two'] } }, { metadata: { correlationId: 'c', actor: 'system:contract', occurredAt } })], {
      expectedRevision: 'no_stream',
    });
    await store.append(other, [ev('O1')], { expectedRevision: 0n });
    await store.append(a, [ev('A2')], { expectedRevision: 1n });
    const { all } = await readAllUntil(store, from, new Set([a, b, other]), 6);
    const expected = all.filter((e) => e.streamName.startsWith(prefix)).map(asFact);
    t.same(
      expected.map((f) => f.type),
      ['A0', 'A1', 'B0', 'A2'],
    );

    const facts = await store.readAllFacts({ fromPosition: from, maxCount: 1000, streamPrefix: prefix });
    t.same(facts.map(asFact), expected, "the prefix's events of readAll, in its order, at its positions, with their data");
    t.equal(facts[2]?.metadata.occurredAt, occurredAt, 'the time it happened (metadata.occurredAt)');
    t.same(Object.keys(facts[0] ?? {}).sort(), ['data', 'metadata', 'position', 'streamName', 'type'], 'and nothing else');

    const paged: RecordedFact[] = [];
    for (let position: Position = from; ; ) {
      const page = await store.readAllFacts({ fromPosition: position, maxCount: 1, streamPrefix: prefix });
      paged.push(...page);
      if (page.length === 0) break;
      position = page[0]!.position;
    }
    t.same(paged.map(asFact), expected, "maxCount counts the prefix's events; a page goes on after the last one read");

    const unfiltered = await store.readAllFacts({ fromPosition: from, maxCount: all.length });
    t.same(unfiltered.map(asFact), all.map(asFact), 'without a prefix: every event readAll reads');
  });
}

/** The contract of readAllPages and of the stream pages over readStream (infra/eventstore/paging.ts). */
export function readAllPagesContract(t: TapTest, store: EventStore): void {
  t.test("readAllPages: readAll's events in bounded pages, from a position, with a prefix or not", async (t) => {
    const from = await mark(store);
    const prefix = `${uniq('pages')}-`;
    const [a, b, other] = [`${prefix}a`, `${prefix}b`, `${uniq('elsewhere')}`];
    await store.append(a, [ev('A0'), ev('A1'), ev('A2')], { expectedRevision: 'no_stream' });
    await store.append(other, [ev('O0')], { expectedRevision: 'no_stream' });
    await store.append(b, [ev('B0'), ev('B1')], { expectedRevision: 'no_stream' });
    await store.append(a, [ev('A3')], { expectedRevision: 2n });
    const { all } = await readAllUntil(store, from, new Set([a, b, other]), 7);
    const ids = (events: ReadonlyArray<RecordedEvent | RecordedEntry>) => events.map((e) => e.id);

    const pages: RecordedEntry[][] = [];
    for await (const page of store.readAllPages({ fromPosition: from, pageSize: 2, streamPrefix: prefix })) pages.push(page);
    t.same(
      pages.map((p) => p.map((e) => e.type)),
      [
        ['A0', 'A1'],
        ['A2', 'B0'],
        ['B1', 'A3'],
      ],
      "the prefix's events in pages of pageSize, in readAll's order",
    );
    t.same(ids(pages.flat()), ids(all.filter((e) => e.streamName.startsWith(prefix))), 'whole events, at their ids');
    t.same(pages.flat()[0], entryOf(all[0]!), "readAll's event as entryOf makes it");
    t.same(pages.flat(), all.filter((e) => e.streamName.startsWith(prefix)).map(entryOf), 'every one of them');

    const unfiltered: RecordedEntry[] = [];
    for await (const page of store.readAllPages({ fromPosition: from, pageSize: 3 })) {
      t.ok(page.length > 0 && page.length <= 3, 'no page larger than pageSize, none empty');
      unfiltered.push(...page);
    }
    t.same(ids(unfiltered.slice(0, all.length)), ids(all), 'without a prefix: what readAll reads');

    const later: RecordedEntry[] = [];
    for await (const page of store.readAllPages({ fromPosition: all[4]!.position, pageSize: 10, streamPrefix: prefix })) later.push(...page);
    t.same(
      later.map((e) => e.type),
      ['B1', 'A3'],
      'fromPosition is exclusive',
    );
    await t.rejects(() => store.readAllPages({ pageSize: 0 })[Symbol.asyncIterator]().next(), RangeError);
    await t.rejects(async () => {
      for await (const _ of store.readAllPages({ pageSize: MAX_PAGE_SIZE + 1 })) void _;
    }, RangeError);

    const streamed: RecordedEvent[][] = [];
    for await (const page of streamPages(store, a, 3)) streamed.push(page);
    t.same(
      streamed.map((p) => p.map((e) => e.type)),
      [['A0', 'A1', 'A2'], ['A3']],
      "a stream's pages",
    );
    const none: RecordedEvent[][] = [];
    for await (const page of streamPages(store, uniq('absent'), 3)) none.push(page);
    t.same(none, [], 'an absent stream has no page');
  });
}

/** The contract of readStreamEntries: readStream's events, each with only its entry's fields. */
export function readStreamEntriesContract(t: TapTest, store: EventStore): void {
  t.test("readStreamEntries: readStream's events with id, position, type, data and time", async (t) => {
    const [a, other] = [uniq('entries'), uniq('entries-other')];
    const occurredAt = '2025-03-01T10:00:00.123Z';
    await store.append(
      a,
      [ev('E0', { n: 0 }), ev('E1', { nested: { list: [1, 'two'] } }, { metadata: { correlationId: 'c', actor: 'system:contract', occurredAt } })],
      {
        expectedRevision: 'no_stream',
      },
    );
    await store.append(other, [ev('O0')], { expectedRevision: 'no_stream' });
    // an event whose metadata says no time: its entry's time is the one the store recorded
    const untimed = { correlationId: 'c', actor: 'system:contract' } as unknown as RecordedEvent['metadata'];
    await store.append(a, [ev('E2', { n: 2 }, { metadata: untimed })], { expectedRevision: 1n });
    const events = await store.readStream(a);
    const entries = await store.readStreamEntries(a);
    t.same(entries, events.map(entryOf), "readStream's events, in its order, each as entryOf makes it");
    t.same(
      entries.map((e) => e.type),
      ['E0', 'E1', 'E2'],
      "the stream's own events only",
    );
    t.equal(entries[1]?.time, occurredAt, 'the time it happened (metadata.occurredAt)');
    t.equal(entries[2]?.metadata.occurredAt, undefined, 'no occurredAt where the metadata has none');
    t.equal(entries[2]?.time, events[2]?.createdAt.toISOString(), 'and then the time the store recorded it, in ISO');
    t.same(Object.keys(entries[0] ?? {}).sort(), ['data', 'id', 'metadata', 'position', 'streamName', 'time', 'type'], 'and nothing else');
    t.same(await store.readStreamEntries(uniq('absent')), [], 'an absent stream has none');
    t.same(await store.readStreamEntries(a, { fromRevision: 1n }), events.slice(1).map(entryOf), 'from a revision: that event and those after it');
    t.same(await store.readStreamEntries(a, { fromRevision: 3n }), [], 'from past the last revision: none');
  });
}
