import { randomUUID } from 'node:crypto';
import t from 'tap';
import { migrate } from '../../infra/db.ts';
import { createPostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../../infra/eventstore/postgres-schema.ts';
import type { EventStore, RecordedEvent, Subscription } from '../../infra/eventstore/port.ts';
import { checkpointMigrations } from '../../projections/checkpoints.ts';
import type { Projector } from '../../projections/projector.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { createReadYourWrites } from '../../projections/wait.ts';
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
  let last;
  for (let s = 0; s < streams; s++) {
    const r = await store.append(`s-${s}`, Array.from({ length: perStream }, () => ({ type: 'N', data: { n: 1 }, metadata: meta() })), { expectedRevision: 'any' });
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
  t.ok(rows.every((r) => r.events === '50'), 'every event applied exactly once');
});

t.test('a batch that fails is retried, not skipped (fault injected into the projector)', async (t) => {
  const { db, store } = await setup(t);
  let failures = 2;
  const flaky: Projector = {
    ...statsProjector,
    async applyBatch(client, events) {
      if (failures-- > 0) throw new Error('read model unavailable (injected)');
      await statsProjector.applyBatch!(client, events);
    },
  };
  const errors: string[] = [];
  const runner = new ProjectionRunner(store, db.pool, [flaky], { onError: (stage) => errors.push(stage) });
  await runner.start();
  t.teardown(() => runner.stop());
  const last = await appendMany(store, 3, 20);
  t.ok(await runner.waitFor(last, 10_000), 'caught up after the failures');
  t.same(errors, ['apply', 'apply']);
  t.ok((await statsSnapshot(db.pool)).every((r) => r.events === '20'), 'nothing lost, nothing doubled');
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
  t.same((await statsSnapshot(db.pool)).map((r) => r.events), ['5'], 'and then the read model shows the write');

  const quick = createReadYourWrites({ pool: db.pool, projectorNames: [statsProjector.name], timeoutMs: 200 });
  const beyond = { commit: position.commit + 1_000_000n, prepare: 0n };
  const t0 = Date.now();
  await quick(beyond);
  t.ok(Date.now() - t0 < 1000, 'a wait that cannot be met ends at its bound');
});
