// The command pipeline's state cache: two command rooms on one database stand for two processes,
// each with its own cache and writer queue, writing the same streams. A stale cache may cost a retry, never a wrong
// decision or a lost event.
import t from 'tap';
import { createCommandRoom, type CommandRoom, type HandleOptions } from '../../commands/handle.ts';
import { DomainError, invariant, InvariantViolation, refuse } from '../../domain/shared/errors.ts';
import { randomIds } from '../../infra/ids.ts';
import { ConcurrencyError } from '../../infra/eventstore/port.ts';
import { at } from '../support/given-when-then.ts';
import { migrate } from '../../infra/db.ts';
import { createPostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../../infra/eventstore/postgres-schema.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import { freshDatabase } from '../support/db.ts';

type CounterEvent = { type: 'Added'; data: { n: number } };
interface Counter {
  total: number;
  events: number;
}
/** Counts its folds: a catch-up read folds only the events after the cached state. */
let folds = 0;
const counterFolder = {
  initialState: (): Counter => ({ total: 0, events: 0 }),
  evolve: (s: Counter, e: CounterEvent): Counter => {
    folds++;
    return { total: s.total + e.data.n, events: s.events + 1 };
  },
};
const options = (deadlineMs = 5000): HandleOptions => ({ metadata: at(new Date(0)), ids: randomIds, deadline: Date.now() + deadlineMs });

/** Adds n unless the total would pass the cap: a refusal that depends on the state. */
const add = (room: CommandRoom, stream: string, n: number, cap = Infinity) =>
  room.handle(
    stream,
    counterFolder,
    (s) => {
      if (s.total + n > cap) throw refuse('VALIDATION_FAILED', `cap ${cap} reached at ${s.total}`);
      return [{ type: 'Added', data: { n } }];
    },
    options(),
  );

/** The store, counting its stream reads: whether a load read or trusted what it held. */
function countingReads(store: EventStore): { counted: EventStore; reads: () => number } {
  let n = 0;
  const counted: EventStore = {
    ...store,
    readStream: (name, o) => {
      n++;
      return store.readStream(name, o);
    },
  };
  return { counted, reads: () => n };
}

t.test('the command state cache', async (t) => {
  const db = await freshDatabase('cmd');
  t.teardown(() => db.drop());
  await migrate(db.pool, eventStoreMigrations);
  const a = createCommandRoom(createPostgresEventStore({ pool: db.pool }));
  const b = createCommandRoom(createPostgresEventStore({ pool: db.pool }));
  t.teardown(async () => {
    await a.store.close();
    await b.store.close();
  });

  await t.test('a load folds only the events after the cached state and equals a full fold', async (t) => {
    for (let i = 1; i <= 5; i++) await add(a, 'counter-1', i);
    folds = 0;
    const cachedLoad = await a.load('counter-1', counterFolder);
    t.equal(folds, 0, 'nothing new: no fold at all');
    await add(b, 'counter-1', 10);
    folds = 0;
    const caughtUp = await a.load('counter-1', counterFolder);
    t.equal(folds, 1, 'one new event, one fold');
    t.match(caughtUp, { state: { total: 25, events: 6 }, revision: 5n });
    t.ok(caughtUp.position, 'with the position of the last event, for read-your-writes');
    t.same(cachedLoad.revision, 4n);
    const fresh = createCommandRoom(createPostgresEventStore({ pool: db.pool }));
    const { verifiedAt: _a, ...uncached } = await fresh.load('counter-1', counterFolder);
    const { verifiedAt: _b, ...cached } = caughtUp;
    t.same(uncached, cached, 'equals a load by a room with no cache (but for when each was verified)');
  });

  await t.test('a command decided on a stale cache is retried on the fresh state, never lost', async (t) => {
    await add(a, 'counter-2', 1); // a caches revision 0
    await add(b, 'counter-2', 2); // b appends revision 1 behind a's back
    const result = await add(a, 'counter-2', 3); // a decides on revision 0 first, conflicts, reloads
    t.same(result.state, { total: 6, events: 3 });
    const all = await a.store.readStream('counter-2');
    t.same(
      all.map((e) => (e.data as { n: number }).n),
      [1, 2, 3],
      'every event once, in order',
    );
  });

  await t.test('a refusal is never answered from a stale cache', async (t) => {
    await add(a, 'counter-3', 5, 10); // a caches total 5
    await add(b, 'counter-3', 4, 10); // total 9, a does not know
    // On a's cached state (5) adding 3 fits; the append's expected revision refuses it, the
    // fresh state (9) refuses the command itself.
    const refused = await add(a, 'counter-3', 3, 10).catch((e: Error) => e);
    t.match(refused, { message: 'cap 10 reached at 9' });
    // The other way round: b's cache (9) would refuse adding 1 after a withdrawal it has not seen;
    // here the stale cache says "full" while the stream says otherwise.
    await add(a, 'counter-3', -8, 10); // total 1
    const accepted = await add(b, 'counter-3', 2, 10);
    t.same(accepted.state, { total: 3, events: 4 }, 'decided again on the fresh state instead of refusing');
  });

  await t.test('an invariant a stale cache breaks is decided again on the fresh state, one the stream breaks is thrown', async (t) => {
    // "the total never passes 0 downwards": a's cache (3) sees -5 as impossible, the stream (5) does not.
    const take = (room: CommandRoom, n: number) =>
      room.handle(
        'counter-invariant',
        counterFolder,
        (s) => {
          invariant(s.total - n >= 0, `taking ${n} of ${s.total}`);
          return [{ type: 'Added', data: { n: -n } }];
        },
        options(),
      );
    await add(a, 'counter-invariant', 3);
    await add(b, 'counter-invariant', 2); // total 5, a's cache still says 3
    t.same((await take(a, 5)).state.total, 0, 'decided again on the fresh state');
    await t.rejects(take(a, 1), new InvariantViolation('taking 1 of 0'), 'on the fresh state it is a bug, not a refusal');
  });

  await t.test('a no-op on a stale cache is decided again on the fresh state', async (t) => {
    await add(a, 'counter-4', 1);
    await add(b, 'counter-4', 1);
    // "add 1 only while the total is below 2": stale a says 1 (act), fresh says 2 (no-op).
    const noop = await a.handle('counter-4', counterFolder, (s) => (s.total < 2 ? [{ type: 'Added', data: { n: 1 } }] : []), options());
    t.same(noop.events, [], 'the append conflicted and the fresh state decided nothing');
    await add(b, 'counter-4', -1); // total 1, a's cache still says 2
    const acted = await a.handle('counter-4', counterFolder, (s) => (s.total < 2 ? [{ type: 'Added', data: { n: 1 } }] : []), options());
    t.equal(acted.events.length, 1, 'a no-op on the cached state was checked against the stream');
    t.same(acted.state.total, 2);
  });

  await t.test('concurrent commands through two processes all land, no client retry needed', async (t) => {
    const writers = Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b));
    await Promise.all(
      writers.map(async (room) => {
        for (let i = 0; i < 10; i++) await add(room, 'counter-5', 1);
      }),
    );
    const fresh = createCommandRoom(createPostgresEventStore({ pool: db.pool }));
    t.same((await fresh.load('counter-5', counterFolder)).state, { total: 80, events: 80 });
    t.same((await a.load('counter-5', counterFolder)).state, { total: 80, events: 80 }, 'a cache caught up equals it');
  });

  await t.test('one process is the single writer of a stream: its commands never race each other', async (t) => {
    let conflicts = 0;
    const store = a.store;
    const counting = createCommandRoom({
      ...store,
      append: (...args: Parameters<typeof store.append>) =>
        store.append(...args).catch((err: unknown) => {
          if (err instanceof ConcurrencyError) conflicts++;
          throw err;
        }),
    });
    // One room: one queue and one cache, as one process has.
    await Promise.all(Array.from({ length: 50 }, () => add(counting, 'counter-6', 1)));
    t.equal(conflicts, 0, 'fifty concurrent commands on one stream: not one lost race');
    t.same((await a.load('counter-6', counterFolder)).state, { total: 50, events: 50 });
  });

  await t.test('a command still losing races at its deadline is refused BUSY and appends nothing', async (t) => {
    let attempts = 0;
    const contended = createCommandRoom({
      ...b.store,
      append: async (stream: string) => {
        attempts++;
        throw new ConcurrencyError(stream, 0n, 99n);
      },
    });
    const started = Date.now();
    const refused = await contended.handle('counter-7', counterFolder, () => [{ type: 'Added', data: { n: 1 } }], options(150)).catch((e: unknown) => e);
    t.ok(refused instanceof DomainError && refused.reason === 'BUSY', 'BUSY, the 503 of the catalogue');
    t.ok(attempts > 2, `retried with backoff (${attempts} attempts)`);
    t.ok(Date.now() - started < 1000, 'not long past the deadline');
    t.same(await a.store.readStream('counter-7'), [], 'nothing appended');
  });

  await t.test('a stream most likely new is decided without a read; one that exists after all is decided again on its fresh state', async (t) => {
    const store = a.store;
    const { counted, reads } = countingReads(store);
    const room = createCommandRoom(counted);
    // "add 1 once": a repeat on the stream's real state decides nothing.
    const once = (r: CommandRoom, stream: string) =>
      r.handle(stream, counterFolder, (s) => (s.events === 0 ? [{ type: 'Added', data: { n: 1 } }] : []), { ...options(), likelyNew: true });
    const created = await once(room, `counter-new-${randomIds.uuid()}`);
    t.equal(reads(), 0, 'a new stream: appended as no_stream without a read');
    t.same(created.state, { total: 1, events: 1 });
    const existing = `counter-new-${randomIds.uuid()}`;
    await once(b, existing); // another process created it
    const repeated = await once(room, existing);
    t.ok(reads() > 0, 'the append as no_stream failed: the stream was read');
    t.same(repeated.events, [], 'decided again on the fresh state: nothing twice');
    t.same(
      (await store.readStream(existing)).map((e) => e.revision),
      [0n],
    );
  });

  await t.test('a planning load takes a state verified within its bound without a read, and reads once it is older', async (t) => {
    const stream = `counter-stale-${randomIds.uuid()}`;
    await add(a, stream, 1);
    const store = a.store;
    const { counted, reads } = countingReads(store);
    const fresh = await a.load(stream, counterFolder, { maxStaleMs: 60_000 });
    t.equal(fresh.state.total, 1, 'the state a appended is cached and verified');
    const before = reads();
    await createCommandRoom(counted).load(stream, counterFolder, { maxStaleMs: 60_000 });
    t.ok(reads() > before, 'another room has no cache of its own to trust');
    await add(b, stream, 5); // another process
    const stale = await a.load(stream, counterFolder, { maxStaleMs: 60_000 });
    t.equal(stale.state.total, 1, 'within the bound: the verified state, not a read (it may be stale)');
    await new Promise((r) => setTimeout(r, 30));
    const reread = await a.load(stream, counterFolder, { maxStaleMs: 10 });
    t.equal(reread.state.total, 6, 'past the bound: read again');
    const answer = await a.load(stream, counterFolder, { cachedOnly: true });
    t.equal(answer.state.total, 6, 'an answer takes the cached state');
  });
});
