// A projector's memory between one runner's batches (projections/projector.ts BatchMemory): used while the stored
// checkpoint is the one that runner's last batch wrote, emptied when another runner applied in between or a batch did not commit.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { migrate } from '../../infra/db.ts';
import { createPostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../../infra/eventstore/postgres-schema.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import { checkpointMigrations } from '../../projections/checkpoints.ts';
import type { Projector } from '../../projections/projector.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { freshDatabase } from '../support/db.ts';

const meta = () => ({ correlationId: randomUUID(), actor: 'test', occurredAt: new Date().toISOString() });

/** Per stream, how many events: the count it starts from is the remembered one if any, else the stored one (reads counted). */
function countingProjector(options: { failNext: boolean }) {
  const reads = { stored: 0 };
  const projector: Projector = {
    name: 'test-memo-counts',
    tables: ['memo_counts'],
    migrations: [{ id: 'test/memo-counts', sql: 'CREATE TABLE memo_counts (stream_name text PRIMARY KEY, events bigint NOT NULL)' }],
    apply: (client, event) => projector.applyBatch!(client, [event]),
    async applyBatch(client, events, memory) {
      for (const event of events) {
        let count = memory?.get(event.streamName) as number | undefined;
        if (count === undefined) {
          reads.stored += 1;
          const { rows } = await client.query<{ events: string }>('SELECT events FROM memo_counts WHERE stream_name = $1', [event.streamName]);
          count = Number(rows[0]?.events ?? 0);
        }
        await client.query('INSERT INTO memo_counts (stream_name, events) VALUES ($1, $2) ON CONFLICT (stream_name) DO UPDATE SET events = excluded.events', [
          event.streamName,
          count + 1,
        ]);
        memory?.set(event.streamName, count + 1);
      }
      if (options.failNext) {
        options.failNext = false;
        throw new Error('injected failure after the memory was written');
      }
    },
  };
  return { projector, reads };
}

async function appendTo(store: EventStore, n: number) {
  const r = await store.append(
    's-1',
    Array.from({ length: n }, () => ({ type: 'N', data: {}, metadata: meta() })),
    { expectedRevision: 'any' },
  );
  return r.position;
}

t.test("a runner's memory is used while its own batches are the only writer, and dropped when another runner wrote", async (t) => {
  const db = await freshDatabase('memory');
  t.teardown(() => db.drop());
  const failing = { failNext: false };
  const a = countingProjector(failing);
  const b = countingProjector({ failNext: false });
  await migrate(db.pool, [...eventStoreMigrations, ...checkpointMigrations, ...a.projector.migrations]);
  const store = createPostgresEventStore({ pool: db.pool, connectionString: db.url });
  t.teardown(() => store.close());
  const runnerA = new ProjectionRunner(store, db.pool, [a.projector], { stalledRetryMs: 50 });
  const runnerB = new ProjectionRunner(store, db.pool, [b.projector]);
  const count = async () => Number((await db.pool.query<{ events: string }>('SELECT events FROM memo_counts')).rows[0]?.events);

  await runnerA.start();
  t.ok(await runnerA.waitFor(await appendTo(store, 1), 5000));
  t.ok(await runnerA.waitFor(await appendTo(store, 1), 5000));
  t.equal(await count(), 2);
  t.equal(a.reads.stored, 1, 'the second batch starts from what the first one wrote, not read back');
  await runnerA.stop();

  await runnerB.start();
  t.ok(await runnerB.waitFor(await appendTo(store, 3), 5000));
  await runnerB.stop();
  t.equal(await count(), 5);

  await runnerA.start();
  t.teardown(() => runnerA.stop());
  t.ok(await runnerA.waitFor(await appendTo(store, 1), 5000));
  t.equal(await count(), 6, 'another runner applied in between: the stored count is read again, not the remembered 2');
  t.equal(a.reads.stored, 2);

  failing.failNext = true;
  const position = await appendTo(store, 1);
  t.ok(await runnerA.waitFor(position, 5000), 'applied once the failed batch is tried again');
  t.equal(await count(), 7, 'a batch that did not commit leaves nothing remembered of it');
  t.ok(a.reads.stored >= 3, 'the stored count is read again after the failure');
});
