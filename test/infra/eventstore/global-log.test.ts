import t from 'tap';
import { migrate } from '../../../infra/db.ts';
import { createPostgresEventStore } from '../../../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../../../infra/eventstore/postgres-schema.ts';
import { checkpointMigrations } from '../../../projections/checkpoints.ts';
import { ProjectionRunner } from '../../../projections/runner.ts';
import { rebuild } from '../../../projections/rebuild.ts';
import type { RecordedEvent } from '../../../infra/eventstore/port.ts';
import { freshDatabase } from '../../support/db.ts';
import { statsProjector, statsSnapshot } from '../../support/stats-projector.ts';
import { runWriters } from '../../support/writers.ts';

const TOTAL = Number(process.env.GLOBAL_LOG_EVENTS ?? 50_000);

t.test('16 concurrent writers: a live subscriber sees every event exactly once, in full-read order', async (t) => {
  const db = await freshDatabase('glog');
  t.teardown(() => db.drop());
  await migrate(db.pool, [...eventStoreMigrations, ...checkpointMigrations, ...statsProjector.migrations]);
  const store = createPostgresEventStore({ pool: db.pool, connectionString: db.url });
  t.teardown(() => store.close());
  const runner = new ProjectionRunner(store, db.pool, [statsProjector]);
  await runner.start();

  const received: RecordedEvent[] = [];
  const subscription = store.subscribeAll();
  const following = (async () => {
    for await (const e of subscription) {
      received.push(e);
      if (received.length >= TOTAL) break;
    }
  })();

  const started = Date.now();
  const written = await runWriters(db.url, { writers: 16, events: TOTAL, holdOpenMs: 5 });
  t.equal(written.events, TOTAL, `${TOTAL} events appended`);
  const wroteMs = Date.now() - started;
  await following;
  await subscription.close();
  t.comment(`written in ${wroteMs} ms; the subscriber had all ${Date.now() - started - wroteMs} ms after the last append`);

  const ids = received.map((e) => e.id);
  t.equal(new Set(ids).size, TOTAL, 'no event repeated');
  t.equal(ids.length, TOTAL, 'no event skipped');

  const full: string[] = [];
  for (let from = undefined as RecordedEvent['position'] | undefined; ; ) {
    const batch = await store.readAll({ fromPosition: from, maxCount: 5000 });
    full.push(...batch.map((e) => e.id));
    if (batch.length < 5000) break;
    from = batch[batch.length - 1]!.position;
  }
  t.same(ids, full, 'the live order is the order a later full read returns');

  const disagreeing = await db.pool.query<{ n: string }>(`
    SELECT count(*) AS n FROM (
      SELECT position, lag(position) OVER (ORDER BY transaction_id, position) AS previous FROM events) s
    WHERE position < previous`);
  t.comment(`rows whose transaction order and position order disagree: ${disagreeing.rows[0]!.n}`);

  // The projector has followed live; it must have applied each event once.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { rows } = await db.pool.query<{ n: string }>('SELECT coalesce(sum(events), 0)::text AS n FROM stream_stats');
    if (Number(rows[0]!.n) >= TOTAL) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.comment(`projector caught up ${Date.now() - started} ms after the first append`);
  await runner.stop();
  const live = await statsSnapshot(db.pool);
  t.equal(
    live.reduce((s, r) => s + Number(r.events), 0),
    TOTAL,
    'the projector applied every event once',
  );
  await rebuild(store, db.pool, statsProjector);
  t.same(await statsSnapshot(db.pool), live, 'the live read model equals a rebuild');
});
