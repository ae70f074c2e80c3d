import { randomUUID } from 'node:crypto';
import t from 'tap';
import { migrate } from '../../infra/db.ts';
import { createPostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../../infra/eventstore/postgres-schema.ts';
import { comparePositions, type EventStore, type Position, type RecordedEvent, type Subscription } from '../../infra/eventstore/port.ts';
import { projectorStalled } from '../../infra/metrics.ts';
import { checkpointMigrations, readCheckpoint } from '../../projections/checkpoints.ts';
import type { Projector } from '../../projections/projector.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { announceApplied, createReadYourWrites, listenApplied } from '../../projections/wait.ts';
import { createRedis } from '../../infra/redis.ts';
import { until } from '../support/until.ts';
import { freshDatabase } from '../support/db.ts';
import { statsProjector, statsSnapshot } from '../support/stats-projector.ts';

const meta = () => ({ correlationId: randomUUID(), actor: 'test', occurredAt: new Date().toISOString() });

async function setup(t: { teardown(fn: () => unknown): void }) {
  const db = await freshDatabase('recover');
  t.teardown(() => db.drop());
  await migrate(db.pool, [...eventStoreMigrations, ...checkpointMigrations, ...statsProjector.migrations]);
  const store = createPostgresEventStore({ pool: db.pool, connectionString: db.url });
  t.teardown(() => store.close());
  return { db, store };
}

async function appendMany(store: EventStore, streams: number, perStream: number) {
  let last: Position | undefined;
  for (let s = 0; s < streams; s++) {
    const r = await store.append(
      `s-${s}`,
      Array.from({ length: perStream }, () => ({ type: 'N', data: { n: 1 }, metadata: meta() })),
      { expectedRevision: 'any' },
    );
    last = r.position;
  }
  return last!;
}

/** The real store, whose first subscription breaks after `after` events (fault injected). */
function breakingStore(store: EventStore, after: number): EventStore {
  let broken = false;
  return {
    ...store,
    subscribeAll(options) {
      const inner = store.subscribeAll(options);
      if (broken) return inner;
      broken = true;
      async function* failing(): AsyncGenerator<RecordedEvent> {
        let n = 0;
        for await (const e of inner) {
          if (++n > after) throw new Error('connection lost (injected)');
          yield e;
        }
      }
      const it = failing();
      return { [Symbol.asyncIterator]: () => it, close: () => inner.close() } satisfies Subscription;
    },
  };
}

t.test('a subscription that fails mid-stream is resumed from the last event read (fault injected into the store)', async (t) => {
  const { db, store } = await setup(t);
  const last = await appendMany(store, 10, 50);
  const errors: string[] = [];
  const runner = new ProjectionRunner(breakingStore(store, 137), db.pool, [statsProjector], {
    onError: (stage) => errors.push(stage),
  });
  await runner.start();
  t.teardown(() => runner.stop());
  t.ok(await runner.waitFor(last, 10_000), 'the runner caught up');
  t.same(errors, ['read'], 'the failure was reported once');
  const rows = await statsSnapshot(db.pool);
  t.equal(rows.length, 10);
  t.ok(
    rows.every((r) => r.events === '50'),
    'every event applied exactly once',
  );
});

/** Polls until `check` holds (or fails the test after `ms`). */
async function eventually(t: { pass(m: string): void; fail(m: string): void }, what: string, check: () => Promise<boolean> | boolean, ms = 10_000) {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) return t.fail(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  t.pass(what);
}

t.test('a projector that fails is held back and tried again: nothing skipped, nothing doubled (fault injected)', async (t) => {
  const { db, store } = await setup(t);
  let failures = 2;
  const flaky: Projector = {
    ...statsProjector,
    async applyBatch(client, events) {
      if (failures-- > 0) throw new Error('read model unavailable (injected)');
      await statsProjector.applyBatch!(client, events);
    },
  };
  const errors: Array<[string, string | undefined]> = [];
  const runner = new ProjectionRunner(store, db.pool, [flaky], { onError: (stage, _err, name) => errors.push([stage, name]), stalledRetryMs: 50 });
  await runner.start();
  t.teardown(() => runner.stop());
  const last = await appendMany(store, 3, 20);
  await eventually(t, 'caught up after the failures', async () => comparePositions(await readCheckpoint(db.pool, flaky.name), last) >= 0);
  t.same(errors, [['apply', flaky.name]], 'held back once (the batch, then the savepoint attempt), then caught up');
  t.same(runner.stalledProjectors(), [], 'no longer held back');
  t.ok(
    (await statsSnapshot(db.pool)).every((r) => r.events === '20'),
    'nothing lost, nothing doubled',
  );
});

t.test('an event one projector cannot apply holds back that projector only; fixed, it catches up', async (t) => {
  const { db, store } = await setup(t);
  await migrate(db.pool, [{ id: 'test/type-counts', sql: 'CREATE TABLE type_counts (event_type text PRIMARY KEY, n bigint NOT NULL)' }]);
  let poisoned = true;
  const typeCounts: Projector = {
    name: 'test-type-counts',
    tables: ['type_counts'],
    migrations: [],
    async apply(client, event) {
      if (poisoned && event.type === 'Poison') throw new Error('cannot apply Poison (injected)');
      await client.query('INSERT INTO type_counts VALUES ($1, 1) ON CONFLICT (event_type) DO UPDATE SET n = type_counts.n + 1', [event.type]);
    },
  };
  const counts = async () =>
    Object.fromEntries(
      (await db.pool.query<{ event_type: string; n: string }>('SELECT event_type, n FROM type_counts')).rows.map((r) => [r.event_type, Number(r.n)]),
    );
  const errors: Array<[string, string | undefined]> = [];
  const committed: string[] = [];
  const runner = new ProjectionRunner(store, db.pool, [statsProjector, typeCounts], {
    onError: (stage, _err, name) => errors.push([stage, name]),
    onCommitted: (events) => committed.push(...events.map((e) => e.type)),
    stalledRetryMs: 50,
  });
  await runner.start();
  t.teardown(() => runner.stop());

  const before = await appendMany(store, 2, 5); // 10 N events
  t.ok(await runner.waitFor(before, 10_000));
  await store.append('poison', [{ type: 'Poison', data: { n: 1 }, metadata: meta() }], { expectedRevision: 'no_stream' });
  const after = await appendMany(store, 3, 4); // 12 more N events, to s-0..s-2

  await eventually(
    t,
    'the healthy read model goes past the poison',
    async () => comparePositions(await readCheckpoint(db.pool, statsProjector.name), after) >= 0,
  );
  t.same(
    (await statsSnapshot(db.pool)).map((r) => [r.stream_name, r.events]),
    [
      ['poison', '1'],
      ['s-0', '9'],
      ['s-1', '9'],
      ['s-2', '4'],
    ],
  );
  t.same(
    runner.stalledProjectors().map((s) => s.name),
    [typeCounts.name],
    'the failing one is named',
  );
  t.same(await counts(), { N: 10 }, 'and stays at its checkpoint before the poison');
  t.same(errors[0], ['apply', typeCounts.name]);
  t.equal((await projectorStalled.get()).values.find((v) => v.labels.projector === typeCounts.name)?.value, 1, 'projector_stalled is 1');
  const t0 = Date.now();
  t.equal(await runner.waitFor(after, 5000), false, 'read-your-writes does not wait for a held-back projector');
  t.ok(Date.now() - t0 < 1000, 'it answers at once, not at its time-out');

  const committedBeforeFix = committed.length;
  poisoned = false; // the fix is deployed
  await eventually(t, 'the held-back projector catches up and rejoins', () => runner.stalledProjectors().length === 0);
  t.ok(
    committed.slice(committedBeforeFix).includes('Poison'),
    'what the catch-up applied is reported as committed (the identity cache forgets the users it changed)',
  );
  t.equal(await runner.waitFor(after, 5000), true);
  t.same(await counts(), { N: 22, Poison: 1 }, 'every event once');
  const more = await appendMany(store, 1, 3);
  t.ok(await runner.waitFor(more, 10_000), 'and it goes on with the shared batches');
  t.same(await counts(), { N: 25, Poison: 1 });
  t.equal((await projectorStalled.get()).values.find((v) => v.labels.projector === typeCounts.name)?.value, 0);
});

t.test('read-your-writes in a process without projectors polls the checkpoints', async (t) => {
  const { db, store } = await setup(t);
  const wait = createReadYourWrites({ pool: db.pool, projectorNames: [statsProjector.name], timeoutMs: 5000 });
  const position = await appendMany(store, 1, 5);
  const runner = new ProjectionRunner(store, db.pool, [statsProjector]);
  const started = Date.now();
  setTimeout(() => void runner.start(), 300); // the projector process starts late
  t.teardown(() => runner.stop());
  await wait(position);
  const waited = Date.now() - started;
  t.ok(waited >= 300, 'it waited for the projector');
  t.ok(waited < 3000, `it saw the checkpoint pass, well before its 5 s bound (${waited} ms)`);
  t.same(
    (await statsSnapshot(db.pool)).map((r) => r.events),
    ['5'],
    'and then the read model shows the write',
  );

  const quick = createReadYourWrites({ pool: db.pool, projectorNames: [statsProjector.name], timeoutMs: 200 });
  const beyond = { commit: position.commit + 1_000_000n, prepare: 0n };
  const t0 = Date.now();
  await quick(beyond);
  t.ok(Date.now() - t0 < 1000, 'a wait that cannot be met ends at its bound');
});

t.test('without projectors, the waiting writes read the checkpoints together, and when a runner elsewhere announces a batch', async (t) => {
  const { db, store } = await setup(t);
  const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', `test:${randomUUID()}:`);
  t.teardown(() => redis.disconnect());
  const notices = listenApplied(redis, (err) => t.fail(String(err)));
  t.teardown(() => notices.close());
  await until('the announcements heard', async () => notices.live());
  // the checkpoint reads counted at the pool the waits are given (the real pool underneath)
  let reads = 0;
  const counting = {
    query: (...args: Parameters<typeof db.pool.query>) => {
      if (String(args[0]).includes('projection_checkpoints')) reads++;
      return db.pool.query(...args);
    },
  } as unknown as typeof db.pool;
  // with announcements heard, the fallback read is 5 s away: what ends these waits sooner is the announcement
  const wait = createReadYourWrites({
    pool: counting,
    projectorNames: [statsProjector.name],
    timeoutMs: 10_000,
    notices,
    checkEveryMs: { heard: 5_000, unheard: 20 },
  });
  const position = await appendMany(store, 1, 5);
  const waits = Array.from({ length: 8 }, () => wait(position));
  await new Promise((r) => setTimeout(r, 500));
  t.ok(reads <= 3, `eight writes waiting 500 ms read the checkpoints ${reads} times (polled each on its own, about 80)`);

  let committedAt = 0;
  const runner = new ProjectionRunner(store, db.pool, [statsProjector], {
    onCommitted: () => {
      committedAt = performance.now();
      announceApplied(redis, (err) => t.fail(String(err)));
    },
  });
  t.teardown(() => runner.stop());
  await runner.start();
  t.same(await Promise.all(waits), Array(8).fill(true), 'every write saw its projection');
  const ms = performance.now() - committedAt;
  t.ok(ms < 1_000, `${Math.round(ms)} ms after the runner's commit, by its announcement (the fallback read was 5 s away)`);
});

t.test('while a batch is applied the runner reads the log at most once, not once per append (reads counted at the driver)', async (t) => {
  const { db } = await setup(t);
  let applying = false;
  let readsWhileApplying = 0;
  // The store's pool, with every read of the global log made while a batch is applied counted.
  const counted = new Proxy(db.pool, {
    get(target, prop) {
      if (prop === 'query') {
        return (config: unknown, ...rest: unknown[]) => {
          if (applying && (config as { name?: string }).name === 'read-all') readsWhileApplying++;
          return (target.query as (...a: unknown[]) => unknown)(config, ...rest);
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const store = createPostgresEventStore({ pool: counted });
  t.teardown(() => store.close());
  let batches = 0;
  const slow: Projector = {
    ...statsProjector,
    async applyBatch(client, events) {
      batches++;
      applying = true;
      await new Promise((r) => setTimeout(r, 25));
      applying = false;
      await statsProjector.applyBatch!(client, events);
    },
  };
  const runner = new ProjectionRunner(store, db.pool, [slow]);
  await runner.start();
  t.teardown(() => runner.stop());
  let last: Position | undefined;
  for (let i = 0; i < 60; i++) {
    last = (await store.append(`p-${i % 6}`, [{ type: 'N', data: { n: 1 }, metadata: meta() }], { expectedRevision: 'any' })).position;
    await new Promise((r) => setTimeout(r, 2));
  }
  t.ok(await runner.waitFor(last!, 10_000), 'caught up');
  t.same(
    (await statsSnapshot(db.pool)).map((r) => [r.stream_name, r.events]),
    Array.from({ length: 6 }, (_, i) => [`p-${i}`, '10']),
    'every event once',
  );
  t.ok(batches < 30, `appends were batched (${batches} batches)`);
  t.ok(readsWhileApplying <= batches, `${readsWhileApplying} reads while ${batches} batches were applied: at most one each`);
});
