// Protocol tests of the EventStoreDB peer through the raw @eventstore/db-client: the client's own
// decoding must see what a server sends (errors, idempotency, created, reads, subscriptions).
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import t from 'tap';
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AppendExpectedRevision,
  type Position,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { clientEntry, generatedPath, grpc, streamsPb } from '../../support/esdb-peer/proto.ts';
import { startEsdbPeer } from '../../support/esdb-peer/index.ts';
import { withTimeout, type TapTest } from './contract-helpers.ts';

const e = (type: string, id = randomUUID()) => jsonEvent({ id, type, data: { type }, metadata: { by: 'peer-test' } });
const name = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of iterable) out.push(x);
  return out;
}

async function open(t: TapTest, options: Parameters<typeof startEsdbPeer>[0] = {}, query = '') {
  const peer = await startEsdbPeer(options);
  const client = EventStoreDBClient.connectionString(`${peer.url}${query}`);
  t.teardown(async () => {
    await client.dispose();
    await peer.stop();
  });
  return { peer, client };
}

t.test('the peer uses the generated modules and grpc-js the client uses', async (t) => {
  const { client } = await open(t);
  await client.appendToStream(name('warm'), e('Warm'));
  const fromClientDist = createRequire(createRequire(clientEntry).resolve('./streams/appendToStream/append.js'));
  t.equal(fromClientDist.resolve('../../../generated/streams_pb'), generatedPath('streams_pb'), 'same file as the client requires');
  const cache = createRequire(import.meta.url).cache;
  t.equal(cache[generatedPath('streams_pb')]?.exports, streamsPb, 'same module instance');
  t.equal(fromClientDist('@grpc/grpc-js'), grpc, 'same grpc-js instance');
});

for (const path of ['BatchAppend', 'Append'] as const) {
  t.test(`${path}: WrongExpectedVersionError carries the server's fields`, async (t) => {
    const { peer, client } = await open(t, { batchAppend: path === 'BatchAppend' });
    const existing = name('wev');
    await client.appendToStream(existing, [e('A'), e('B')], { expectedRevision: NO_STREAM });
    const cases: Array<[string, AppendExpectedRevision, bigint | string, bigint | string]> = [
      [existing, 0n, 0n, 1n],
      [existing, 7n, 7n, 1n],
      [existing, NO_STREAM, 'no_stream', 1n],
      [name('missing'), STREAM_EXISTS, 'stream_exists', 'no_stream'],
      [name('missing'), 4n, 4n, 'no_stream'],
    ];
    for (const [stream, expectedRevision, expected, actual] of cases) {
      const err = await client.appendToStream(stream, e('X'), { expectedRevision }).then(
        () => undefined,
        (error: unknown) => error,
      );
      t.ok(err instanceof WrongExpectedVersionError, `expected ${String(expectedRevision)}: WrongExpectedVersionError`, { found: err });
      t.match(err, { streamName: stream, expectedVersion: expected, actualVersion: actual, type: 'wrong-expected-version' });
    }
    t.equal(peer.calls[path === 'BatchAppend' ? 'batchAppend' : 'append'] > 0, true, `the client appended through ${path}`);
    t.equal(peer.calls[path === 'BatchAppend' ? 'append' : 'batchAppend'], 0, 'and only through it');
  });

  t.test(`${path}: a retry with the same event ids is idempotent`, async (t) => {
    const { peer, client } = await open(t, { batchAppend: path === 'BatchAppend' });
    const s = name('idem');
    const [id1, id2, id3] = [randomUUID(), randomUUID(), randomUUID()];
    const first = await client.appendToStream(s, [e('A', id1), e('B', id2)], { expectedRevision: NO_STREAM });
    const logLength = peer.store.log.length;
    const retry = await client.appendToStream(s, [e('A', id1), e('B', id2)], { expectedRevision: NO_STREAM });
    t.same(retry, first, 'same revision and position as the first write');
    const third = await client.appendToStream(s, e('C', id3), { expectedRevision: 1n });
    t.same(await client.appendToStream(s, e('C', id3), { expectedRevision: 1n }), third, 'exact revision retry');
    t.same(await client.appendToStream(s, e('C', id3), { expectedRevision: 'any' }), third, 'any retry');
    t.equal(peer.store.log.length, logLength + 1, 'retries wrote nothing');
    t.same(
      (await collect(client.readStream(s))).map((r: ResolvedEvent) => r.event?.id),
      [id1, id2, id3],
    );
    const partial = await client.appendToStream(s, [e('A', id1), e('New')], { expectedRevision: NO_STREAM }).catch((x: unknown) => x);
    t.match(partial, { actualVersion: 2n, expectedVersion: 'no_stream' }, 'a partial repeat is a wrong expected version');
    const other = await client.appendToStream(s, e('Other'), { expectedRevision: 1n }).catch((x: unknown) => x);
    t.ok(other instanceof WrongExpectedVersionError, 'new ids at an old revision conflict');
  });
}

t.test('Append with throwOnAppendFailure=false reports the failure as a result', async (t) => {
  const { client } = await open(t, { batchAppend: false }, '&throwOnAppendFailure=false');
  const s = name('soft');
  await client.appendToStream(s, [e('A'), e('B')], { expectedRevision: NO_STREAM });
  t.same(await client.appendToStream(s, e('C'), { expectedRevision: 0n }), { success: false, nextExpectedRevision: 1n, position: undefined });
});

t.test('created decodes to the write time and positions match the log', async (t) => {
  const { peer, client } = await open(t);
  const s = name('created');
  const before = Date.now();
  const result = await client.appendToStream(s, e('Stamped'));
  const after = Date.now();
  const [read] = await collect(client.readStream(s));
  const created = read!.event!.created;
  t.ok(created instanceof Date);
  t.ok(created.getTime() >= before && created.getTime() <= after, 'between before and after the append', { created, before, after });
  const stored = peer.store.log.find((x) => x.streamName === s)!;
  t.equal(BigInt(created.getTime()), stored.created / 10_000n, '.NET ticks since the Unix epoch');
  t.same(read!.event!.position, { commit: stored.position, prepare: stored.position });
  t.same(result.position, { commit: stored.position, prepare: stored.position });
  t.same(read!.event!.metadata, { by: 'peer-test' });
});

t.test('stream reads backwards, and stream_not_found', async (t) => {
  const { client } = await open(t);
  const s = name('back');
  await client.appendToStream(
    s,
    ['E0', 'E1', 'E2', 'E3', 'E4'].map((x) => e(x)),
    { expectedRevision: NO_STREAM },
  );
  const revs = async (o: Parameters<typeof client.readStream>[1]) => (await collect(client.readStream(s, o))).map((r: ResolvedEvent) => r.event?.revision);
  t.same(await revs({ direction: BACKWARDS, fromRevision: END }), [4n, 3n, 2n, 1n, 0n]);
  t.same(await revs({ direction: BACKWARDS, fromRevision: 2n, maxCount: 2 }), [2n, 1n]);
  t.same(await revs({ direction: BACKWARDS, fromRevision: START }), [0n], 'backwards from the start is the first event');
  t.same(await revs({ fromRevision: END }), [], 'forwards from the end is empty');
  const missing = name('missing');
  const err = await collect(client.readStream(missing)).catch((x: unknown) => x);
  t.ok(err instanceof StreamNotFoundError, 'StreamNotFoundError', { found: err });
  t.match(err, { streamName: missing, type: 'stream-not-found' });
});

t.test('$all reads: forwards inclusive, backwards exclusive, system events included', async (t) => {
  const { peer, client } = await open(t);
  await client.appendToStream(
    name('all'),
    ['A', 'B', 'C'].map((x) => e(x)),
  );
  const log = peer.store.log;
  const positions = (rs: ResolvedEvent[]) => rs.map((r) => r.event!.position!.commit);
  const all = await collect(client.readAll());
  t.same(
    positions(all),
    log.map((x) => x.position),
    'the whole log in order',
  );
  t.ok(
    all.some((r) => r.event!.type.startsWith('$')),
    'a fresh server has system events',
  );
  const at = { commit: log[2]!.position, prepare: log[2]!.position };
  t.same(positions(await collect(client.readAll({ fromPosition: at, maxCount: 2 }))), [log[2]!.position, log[3]!.position]);
  t.same(positions(await collect(client.readAll({ fromPosition: at, direction: BACKWARDS }))), [log[1]!.position, log[0]!.position]);
  t.same(positions(await collect(client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1 }))), [log.at(-1)!.position]);
});

t.test('subscribeToAll with a filter: confirmation, matching events, checkpoints, caught up, live', async (t) => {
  const { peer, client } = await open(t);
  const prefix = name('match');
  for (let i = 0; i < 6; i++) {
    await client.appendToStream(i % 2 === 0 ? `${prefix}-${i}` : name('other'), e(`E${i}`));
  }
  const checkpoints: Position[] = [];
  const sub = client.subscribeToAll({
    fromPosition: START,
    filter: streamNameFilter({ prefixes: [prefix], checkpointInterval: 1, maxSearchWindow: 2, checkpointReached: (_s, p) => void checkpoints.push(p) }),
  });
  t.teardown(() => sub.unsubscribe());
  const caughtUp = new Promise((resolve) => sub.once('caughtUp', resolve));
  const confirmed = new Promise((resolve) => sub.once('confirmation', resolve));
  const iterator = sub[Symbol.asyncIterator]();
  const next = async () => ((await withTimeout(iterator.next(), 10_000, 'subscription event')).value as ResolvedEvent).event!;
  const got = [await next(), await next(), await next()];
  await withTimeout(confirmed, 1_000, 'confirmation');
  t.match(sub.id, /^[0-9a-f-]{36}$/, 'the confirmation carries a subscription id');
  t.same(
    got.map((x) => x.type),
    ['E0', 'E2', 'E4'],
    'only matching streams, in order',
  );
  await withTimeout(caughtUp, 5_000, 'caughtUp after the catch-up');
  const considered = peer.store.log.length;
  t.equal(checkpoints.length, Math.floor(considered / 2), 'a checkpoint every 2 considered events (1 × window 2)');
  const logPositions = new Set(peer.store.log.map((x) => x.position));
  t.ok(
    checkpoints.every((p) => p.commit === p.prepare && logPositions.has(p.commit)),
    'checkpoints are log positions',
  );
  await client.appendToStream(name('other'), e('Skipped'));
  await client.appendToStream(`${prefix}-live`, e('Live'));
  const live = await next();
  t.equal(live.type, 'Live', 'then live matching events');
  const before = checkpoints.length;
  for (let i = 0; i < 100 && checkpoints.length === before; i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(checkpoints.length, before + 1, 'checkpoints continue while live (2 more considered events)');
  t.equal(checkpoints.at(-1)!.commit, peer.store.log.at(-1)!.position, 'at the last considered event');
});

t.test('subscribeToAll event-type filters, exclusive start, subscribeToStream', async (t) => {
  const { client } = await open(t);
  const s = name('types');
  await client.appendToStream(
    s,
    ['Keep.A', 'Drop', 'Keep.B'].map((x) => e(x)),
  );
  const firstOf = async (sub: AsyncIterable<ResolvedEvent>, n: number) => {
    const out: string[] = [];
    for await (const r of sub) if (out.push(`${r.event!.streamId}:${r.event!.type}`) === n) break;
    return out;
  };
  t.same(await firstOf(client.subscribeToAll({ filter: eventTypeFilter({ regex: '^Keep\\.' }) }), 2), [`${s}:Keep.A`, `${s}:Keep.B`]);
  const noSystem = await firstOf(client.subscribeToAll({ filter: excludeSystemEvents() }), 1);
  t.same(noSystem, [`${s}:Keep.A`], 'excludeSystemEvents skips the server-written $ events');
  const [first] = await collect(client.readStream(s, { maxCount: 1 }));
  t.same(await firstOf(client.subscribeToAll({ fromPosition: first!.event!.position! }), 1), [`${s}:Drop`], 'exclusive of fromPosition');
  t.same(await firstOf(client.subscribeToStream(s, { fromRevision: 0n }), 2), [`${s}:Drop`, `${s}:Keep.B`], 'stream subscription after a revision');
});
