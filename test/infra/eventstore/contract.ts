// The one contract every EventStore adapter passes (PostgreSQL, EventStoreDB, the peer).
// Every test writes to streams of its own and reads relative to a position taken at its
// start, so the suite runs against a shared, non-empty server.
import { comparePositions, START, type EventStore, type RecordedEvent } from '../../../infra/eventstore/port.ts';
import {
  concurrencyError,
  delay,
  ev,
  mark,
  pageAll,
  readAllUntil,
  strictlyIncreasing,
  SubReader,
  summary,
  uniq,
  withTimeout,
  type TapTest,
} from './contract-helpers.ts';
import { readAllFactsContract, readAllPagesContract, readStreamEntriesContract } from './contract-facts.ts';

export type { TapTest } from './contract-helpers.ts';

export interface ContractStore {
  store: EventStore;
  teardown(): Promise<void>;
}

/** Registers the contract as one subtest `name` of `t`; `makeStore` is called once for it. */
export function eventStoreContract(t: TapTest, name: string, makeStore: () => Promise<ContractStore>): void {
  t.test(name, async (t) => {
    const { store, teardown } = await makeStore();
    t.teardown(teardown);
    const byId = (events: RecordedEvent[]) => new Map(events.map((e) => [e.id, e]));

    t.test('ping answers', async (t) => {
      await t.resolves(store.ping());
    });

    t.test('append to a new stream with no_stream', async (t) => {
      const s = uniq('new');
      const events = [ev('Opened', { n: 1 }), ev('Renamed', { n: 2 }), ev('Closed', { n: 3 })];
      const r = await store.append(s, events, { expectedRevision: 'no_stream' });
      t.equal(r.nextRevision, 2n, 'revision of the last event');
      const read = await store.readStream(s);
      t.same(summary(read), [
        [s, 'Opened', 0n],
        [s, 'Renamed', 1n],
        [s, 'Closed', 2n],
      ]);
      t.same(
        read.map((e) => e.id),
        events.map((e) => e.id),
        'ids are kept',
      );
      t.same(r.position, read[2]!.position, 'the append reports the position of its last event');
      t.ok(strictlyIncreasing(read), 'positions increase within the stream');
      const one = await store.append(uniq('single'), [ev('Single')], { expectedRevision: 'no_stream' });
      t.equal(one.nextRevision, 0n);
      t.ok(comparePositions(one.position, r.position) > 0, 'a later append has a later position');
      const noId = uniq('noid');
      const generated = await store.append(noId, [{ ...ev('NoId'), id: undefined }], { expectedRevision: 'any' });
      const [withoutId] = await store.readStream(noId);
      t.match(withoutId?.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'an id is generated');
      t.same(withoutId?.position, generated.position);
    });

    t.test('append with the exact expected revision', async (t) => {
      const s = uniq('exact');
      t.equal((await store.append(s, [ev('A'), ev('B')], { expectedRevision: 'no_stream' })).nextRevision, 1n);
      t.equal((await store.append(s, [ev('C')], { expectedRevision: 1n })).nextRevision, 2n);
      t.equal((await store.append(s, [ev('D'), ev('E')], { expectedRevision: 2n })).nextRevision, 4n);
      t.same(
        (await store.readStream(s)).map((e) => e.type),
        ['A', 'B', 'C', 'D', 'E'],
      );
    });

    t.test('a wrong expected revision on an existing stream is a ConcurrencyError', async (t) => {
      const s = uniq('wrong');
      await store.append(s, [ev('A'), ev('B')], { expectedRevision: 'no_stream' });
      for (const expected of [0n, 5n, 'no_stream'] as const) {
        const err = await concurrencyError(t, store.append(s, [ev('X')], { expectedRevision: expected }), `expected ${expected}`);
        t.equal(err.streamName, s);
        t.equal(err.expectedRevision, expected);
        t.equal(err.actualRevision, 1n, 'actual revision is the last one');
      }
      t.equal((await store.readStream(s)).length, 2, 'nothing was written');
    });

    t.test('a wrong expected revision on a missing stream reports -1', async (t) => {
      const s = uniq('missing');
      for (const expected of [0n, 3n, 'stream_exists'] as const) {
        const err = await concurrencyError(t, store.append(s, [ev('X')], { expectedRevision: expected }), `expected ${expected}`);
        t.equal(err.actualRevision, -1n);
        t.equal(err.expectedRevision, expected);
      }
      t.same(await store.readStream(s), [], 'the stream still does not exist');
    });

    t.test('stream_exists appends to an existing stream', async (t) => {
      const s = uniq('exists');
      await store.append(s, [ev('A')], { expectedRevision: 'no_stream' });
      t.equal((await store.append(s, [ev('B')], { expectedRevision: 'stream_exists' })).nextRevision, 1n);
    });

    t.test('any always appends', async (t) => {
      const s = uniq('any');
      t.equal((await store.append(s, [ev('A')], { expectedRevision: 'any' })).nextRevision, 0n);
      t.equal((await store.append(s, [ev('B')], { expectedRevision: 'any' })).nextRevision, 1n);
      t.equal((await store.append(s, [ev('C'), ev('D')], { expectedRevision: 'any' })).nextRevision, 3n);
      t.same(
        (await store.readStream(s)).map((e) => e.type),
        ['A', 'B', 'C', 'D'],
      );
    });

    t.test('readStream forwards and backwards with fromRevision and maxCount', async (t) => {
      const s = uniq('read');
      await store.append(
        s,
        ['E0', 'E1', 'E2', 'E3', 'E4'].map((type) => ev(type)),
        { expectedRevision: 'no_stream' },
      );
      const revs = async (o: Parameters<EventStore['readStream']>[1]) => (await store.readStream(s, o)).map((e) => e.revision);
      t.same(await revs({}), [0n, 1n, 2n, 3n, 4n], 'forwards by default');
      t.same(await revs({ fromRevision: 2n }), [2n, 3n, 4n], 'forwards from a revision, inclusive');
      t.same(await revs({ maxCount: 2 }), [0n, 1n]);
      t.same(await revs({ fromRevision: 1n, maxCount: 2 }), [1n, 2n]);
      t.same(await revs({ fromRevision: 9n }), [], 'forwards past the end');
      t.same(await revs({ direction: 'backwards' }), [4n, 3n, 2n, 1n, 0n], 'backwards from the end');
      t.same(await revs({ direction: 'backwards', fromRevision: 3n, maxCount: 2 }), [3n, 2n]);
      t.same(await revs({ direction: 'backwards', maxCount: 1 }), [4n], 'the last event');
      t.same(await revs({ direction: 'backwards', fromRevision: 0n }), [0n]);
    });

    t.test('readStream of a missing stream is empty', async (t) => {
      const s = uniq('nothing');
      t.same(await store.readStream(s), []);
      t.same(await store.readStream(s, { direction: 'backwards' }), []);
      t.same(await store.readStream(s, { fromRevision: 3n, maxCount: 2 }), []);
    });

    t.test('data and metadata round-trip', async (t) => {
      const s = uniq('roundtrip');
      const data = {
        text: 'Zürich ✓ 東京 "quoted"\n',
        n: 42.5,
        neg: -7,
        big: '123456789012345678901',
        yes: true,
        no: false,
        none: null,
        list: [1, 'two', { three: [3] }],
        empty: {},
      };
      const metadata = {
        correlationId: 'req-1',
        causationId: 'cmd-9',
        actor: 'user:42',
        occurredAt: '2025-03-01T10:00:00.000Z',
        tenant: 't-1',
        nested: { a: [1, 2] },
      };
      const from = await mark(store);
      const before = Date.now();
      await store.append(s, [ev('Typed.v2', data, { metadata })], { expectedRevision: 'no_stream' });
      const after = Date.now();
      const [fromStream] = await store.readStream(s);
      const [fromAll] = (await readAllUntil(store, from, new Set([s]), 1)).mine;
      for (const [where, e] of [
        ['readStream', fromStream],
        ['readAll', fromAll],
      ] as const) {
        t.same(e?.data, data, `${where}: data`);
        t.same(e?.metadata, metadata, `${where}: metadata`);
        t.equal(e?.type, 'Typed.v2', `${where}: type`);
        t.ok(e?.createdAt instanceof Date, `${where}: createdAt is a Date`);
        const created = e?.createdAt.getTime() ?? 0;
        t.ok(created >= before - 60_000 && created <= after + 60_000, `${where}: createdAt is the write time`, { created, before, after });
      }
    });

    t.test('readAll: global order, exclusive fromPosition, maxCount batching', async (t) => {
      const from = await mark(store);
      const [a, b, c] = [uniq('a'), uniq('b'), uniq('c')];
      const streams = new Set([a, b, c]);
      const results = [
        await store.append(a, [ev('A0')], { expectedRevision: 'no_stream' }),
        await store.append(b, [ev('B0')], { expectedRevision: 'no_stream' }),
        await store.append(a, [ev('A1')], { expectedRevision: 0n }),
        await store.append(c, [ev('C0'), ev('C1'), ev('C2')], { expectedRevision: 'no_stream' }),
        await store.append(b, [ev('B1')], { expectedRevision: 0n }),
        await store.append(a, [ev('A2'), ev('A3')], { expectedRevision: 1n }),
      ];
      const { all, mine } = await readAllUntil(store, from, streams, 9);
      t.same(
        mine.map((e) => e.type),
        ['A0', 'B0', 'A1', 'C0', 'C1', 'C2', 'B1', 'A2', 'A3'],
        'append order',
      );
      t.ok(
        all.every((e) => comparePositions(e.position, from) > 0),
        'exclusive: only events after fromPosition',
      );
      t.ok(strictlyIncreasing(all), 'positions strictly increase');
      t.notOk(
        all.some((e) => e.type.startsWith('$')),
        'no system events',
      );
      const lastOf = ['A0', 'B0', 'A1', 'C2', 'B1', 'A3'].map((type) => mine.find((e) => e.type === type)!.position);
      t.same(
        results.map((r) => r.position),
        lastOf,
        'append positions are the positions readAll reports',
      );
      const streamRead = byId([...(await store.readStream(a)), ...(await store.readStream(b)), ...(await store.readStream(c))]);
      t.ok(
        mine.every((e) => comparePositions(streamRead.get(e.id)!.position, e.position) === 0),
        'readStream reports the same positions',
      );

      const afterA0 = (await store.readAll({ fromPosition: mine[0]!.position, maxCount: 1000 })).filter((e) => streams.has(e.streamName));
      t.same(
        afterA0.map((e) => e.type),
        mine.slice(1).map((e) => e.type),
        'the event at fromPosition is not repeated',
      );

      const pages = await pageAll(store, from, 2);
      t.ok(
        pages.every((p) => p.length <= 2),
        'no page exceeds maxCount',
      );
      t.ok(
        pages.slice(0, -1).every((p) => p.length === 2),
        'only the last page is short',
      );
      const paged = pages.flat();
      t.ok(strictlyIncreasing(paged), 'pages continue each other without overlap');
      t.same(
        paged.slice(0, all.length).map((e) => e.id),
        all.map((e) => e.id),
        'paging reads what one read does',
      );
      t.same(
        paged.filter((e) => streams.has(e.streamName)).map((e) => e.id),
        mine.map((e) => e.id),
      );

      const [first] = await store.readAll({ fromPosition: START, maxCount: 1 });
      const [defaulted] = await store.readAll({ maxCount: 1 });
      t.ok(first && comparePositions(first.position, from) <= 0, 'START reads from the first event');
      t.same(defaulted?.id, first?.id, 'fromPosition defaults to START');
    });

    readAllFactsContract(t, store);
    readAllPagesContract(t, store);
    readStreamEntriesContract(t, store);

    t.test('subscribeAll catches up from START, then follows live appends in readAll order', async (t) => {
      const from = await mark(store);
      const [a, b] = [uniq('sa'), uniq('sb')];
      const streams = new Set([a, b]);
      await store.append(a, [ev('A0'), ev('A1')], { expectedRevision: 'no_stream' });
      await store.append(b, [ev('B0')], { expectedRevision: 'no_stream' });
      const reader = new SubReader(store.subscribeAll());
      t.teardown(() => reader.subscription.close());
      const [first] = await store.readAll({ maxCount: 1 });
      t.equal((await reader.next()).id, first!.id, 'starts at the first event of the log');
      const caught = await reader.take(streams, 3, 120_000);
      t.same(
        caught.map((e) => e.type),
        ['A0', 'A1', 'B0'],
        'catch-up',
      );
      await Promise.all([
        store.append(a, [ev('A2'), ev('A3')], { expectedRevision: 1n }),
        store.append(b, [ev('B1')], { expectedRevision: 0n }),
        store.append(uniq('sc'), [ev('Other')], { expectedRevision: 'any' }),
      ]);
      const live = await reader.take(streams, 3);
      const expected = (await readAllUntil(store, from, streams, 6)).mine;
      t.same(
        [...caught, ...live].map((e) => e.id),
        expected.map((e) => e.id),
        'same order as readAll',
      );
      t.ok(strictlyIncreasing(reader.received), 'every received position is later than the one before');
      t.notOk(
        reader.received.some((e) => e.type.startsWith('$')),
        'no system events',
      );
      t.same(new Set(reader.received.map((e) => e.id)).size, reader.received.length, 'no event twice');
    });

    t.test('subscribeAll from a position starts after it', async (t) => {
      const s = uniq('mid');
      await store.append(
        s,
        ['E0', 'E1', 'E2', 'E3'].map((type) => ev(type)),
        { expectedRevision: 'no_stream' },
      );
      const events = await store.readStream(s);
      const from = events[1]!.position;
      const reader = new SubReader(store.subscribeAll({ fromPosition: from }));
      t.teardown(() => reader.subscription.close());
      const caught = await reader.take(new Set([s]), 2);
      t.same(
        caught.map((e) => e.type),
        ['E2', 'E3'],
        'exclusive of fromPosition',
      );
      t.ok(comparePositions(reader.received[0]!.position, from) > 0, 'nothing at or before fromPosition');
      await store.append(s, [ev('E4')], { expectedRevision: 3n });
      const [live] = await reader.take(new Set([s]), 1);
      t.equal(live?.type, 'E4', 'then live');
      t.same(live?.data, {}, 'with its data');
      t.same(live?.metadata.actor, 'system:contract', 'and its metadata');
    });

    t.test('two subscriptions see the same sequence', async (t) => {
      const from = await mark(store);
      const [a, b] = [uniq('twoa'), uniq('twob')];
      const streams = new Set([a, b]);
      const r1 = new SubReader(store.subscribeAll({ fromPosition: from }));
      const r2 = new SubReader(store.subscribeAll({ fromPosition: from }));
      t.teardown(async () => {
        await r1.subscription.close();
        await r2.subscription.close();
      });
      await store.append(a, [ev('A0')], { expectedRevision: 'no_stream' });
      await Promise.all([
        store.append(a, [ev('A1'), ev('A2')], { expectedRevision: 0n }),
        store.append(b, [ev('B0')], { expectedRevision: 'no_stream' }),
        store.append(b, [ev('B?')], { expectedRevision: 'any' }),
      ]);
      const [s1, s2] = await Promise.all([r1.take(streams, 5), r2.take(streams, 5)]);
      t.same(
        s1.map((e) => [e.id, e.position]),
        s2.map((e) => [e.id, e.position]),
      );
      const expected = (await readAllUntil(store, from, streams, 5)).mine;
      t.same(
        s1.map((e) => e.id),
        expected.map((e) => e.id),
        'in readAll order',
      );
    });

    t.test('close() ends iteration', async (t) => {
      const from = await mark(store);
      const s = uniq('close');
      const sub = store.subscribeAll({ fromPosition: from });
      const iterator = sub[Symbol.asyncIterator]();
      await store.append(s, [ev('Before')], { expectedRevision: 'no_stream' });
      let got = await withTimeout(iterator.next(), 15_000, 'first event');
      while (!got.done && got.value.streamName !== s) got = await withTimeout(iterator.next(), 15_000, 'first event');
      t.equal(got.done ? undefined : got.value.type, 'Before');
      const pending = iterator.next();
      await delay(100);
      await sub.close();
      const ended = await withTimeout(pending, 5_000, 'a pending next() after close()');
      // Alone on the store nothing arrives, so the pending next() resolves done; on a shared
      // server another writer's event may have arrived before close().
      t.ok(ended.done || ended.value.streamName !== s, 'a pending next() resolves done', { ended });
      await store.append(s, [ev('After')], { expectedRevision: 0n });
      t.equal((await withTimeout(iterator.next(), 5_000, 'next() after close()')).done, true, 'stays done');

      const looped = store.subscribeAll({ fromPosition: from });
      const loop = (async () => {
        const seen: RecordedEvent[] = [];
        for await (const e of looped) seen.push(e);
        return seen;
      })();
      await delay(300);
      await looped.close();
      const seen = await withTimeout(loop, 5_000, 'a for await loop after close()');
      t.ok(
        seen.some((e) => e.streamName === s),
        'a for await loop receives, then ends on close()',
      );

      const unused = store.subscribeAll({ fromPosition: from });
      await unused.close();
      t.equal((await withTimeout(unused[Symbol.asyncIterator]().next(), 5_000, 'closed before use')).done, true, 'closed before iterating');
    });

    t.test('concurrent appends with the same expected revision: exactly one wins', async (t) => {
      const s = uniq('race');
      await store.append(s, [ev('Start')], { expectedRevision: 'no_stream' });
      const contenders = Array.from({ length: 8 }, (_, i) => ev(`Try${i}`));
      const settled = await Promise.allSettled(contenders.map((e) => store.append(s, [e], { expectedRevision: 0n })));
      const won = settled.filter((r) => r.status === 'fulfilled');
      t.equal(won.length, 1, 'one winner');
      for (const r of settled) {
        if (r.status === 'rejected') {
          t.equal(r.reason?.code, 'CONCURRENCY_CONFLICT', 'losers get a ConcurrencyError');
          t.equal(r.reason?.actualRevision, 1n);
        }
      }
      const read = await store.readStream(s);
      t.equal(read.length, 2, 'one event written');
      t.equal(read[1]!.id, contenders[settled.findIndex((r) => r.status === 'fulfilled')]!.id, "the winner's event");

      const fresh = uniq('race-new');
      const creators = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => store.append(fresh, [ev(`Create${i}`)], { expectedRevision: 'no_stream' })),
      );
      t.equal(creators.filter((r) => r.status === 'fulfilled').length, 1, 'one creator wins');
      t.ok(
        creators.every((r) => r.status === 'fulfilled' || (r.reason?.code === 'CONCURRENCY_CONFLICT' && r.reason?.actualRevision === 0n)),
        'the others conflict at revision 0',
      );
      t.equal((await store.readStream(fresh)).length, 1);
    });
  });
}
