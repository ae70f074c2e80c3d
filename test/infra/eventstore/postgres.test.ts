import t from 'tap';
import pg from 'pg';
import { migrate } from '../../../infra/db.ts';
import { createPostgresEventStore } from '../../../infra/eventstore/postgres.ts';
import { READ_ALL_SQL } from '../../../infra/eventstore/postgres-reads.ts';
import { eventStoreMigrations } from '../../../infra/eventstore/postgres-schema.ts';
import { START, type Position, type RecordedEvent } from '../../../infra/eventstore/port.ts';
import { freshDatabase } from '../../support/db.ts';

const meta = { correlationId: 'c', actor: 'test', occurredAt: new Date(0).toISOString() };

t.test('postgres store', async (t) => {
  const db = await freshDatabase('es');
  t.teardown(() => db.drop());
  await migrate(db.pool, eventStoreMigrations);
  const store = createPostgresEventStore({ pool: db.pool, connectionString: db.url });
  t.teardown(() => store.close());

  await t.test('an append that commits late is never skipped by a reader or a subscriber', async (t) => {
    const subscription = store.subscribeAll();
    const seen: RecordedEvent[] = [];
    const following = (async () => {
      for await (const e of subscription) {
        seen.push(e);
        if (seen.length === 2) break;
      }
    })();

    // T1 takes its position first and stays open; T2 takes a later position and commits.
    const slow = new pg.Client({ connectionString: db.url });
    await slow.connect();
    await slow.query('BEGIN');
    await slow.query(
      `SELECT * FROM append_events('late-1', 'no_stream', NULL, ARRAY[gen_random_uuid()], ARRAY['Late'], ARRAY['{}'::jsonb], ARRAY[$1::jsonb])`,
      [JSON.stringify(meta)],
    );
    const fast = await store.append('late-2', [{ type: 'Early', data: {}, metadata: meta }], { expectedRevision: 'no_stream' });

    // A reader ordering by position alone would now see position 2 and move past position 1 for good.
    const naive = await db.pool.query('SELECT position FROM events ORDER BY position');
    t.same(
      naive.rows.map((r) => Number(r.position)),
      [Number(fast.position.prepare)],
      'a naive reader sees only the later position',
    );
    t.same(await store.readAll({ maxCount: 10 }), [], 'our reader waits while the earlier transaction is open');

    await slow.query('COMMIT');
    await slow.end();
    await following;
    await subscription.close();
    t.same(
      seen.map((e) => e.type),
      ['Late', 'Early'],
      'the subscriber receives both, each once',
    );
    const all = await store.readAll({ maxCount: 10 });
    t.same(
      all.map((e) => e.id),
      seen.map((e) => e.id),
      'in the order a full read returns',
    );
    t.ok(all[0]!.position.prepare < all[1]!.position.prepare, 'the late commit holds the lower position');
  });

  await t.test('reading the global log is an index range scan', async (t) => {
    await db.pool.query(`INSERT INTO events (stream_name, revision, event_id, event_type, data, metadata)
      SELECT 'bulk-' || g, 0, gen_random_uuid(), 'Bulk', '{}', '{}' FROM generate_series(1, 20000) g`);
    await db.pool.query('ANALYZE events');
    const { rows } = await db.pool.query(`EXPLAIN ${READ_ALL_SQL}`, ['0', '5', 1000]);
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    t.match(plan, /Index Scan using events_pkey/, plan);
    t.notMatch(plan, /Seq Scan|Sort/, 'no scan of the whole table, no sort');
  });

  await t.test('the global order follows transaction ids as numbers, not as text', async (t) => {
    // Rows whose transaction ids cross a power of ten: 9 < 10 as numbers, not as text.
    await db.pool.query(`INSERT INTO events (transaction_id, stream_name, revision, event_id, event_type, data, metadata) VALUES
      ('10', 'digits-b', 0, gen_random_uuid(), 'B', '{}', '{}'),
      ('9', 'digits-a', 0, gen_random_uuid(), 'A', '{}', '{}')`);
    const all: string[] = [];
    let from: Position | undefined;
    for (;;) {
      const batch = await store.readAll({ fromPosition: from, maxCount: 7 });
      all.push(...batch.map((e) => e.streamName));
      if (batch.length < 7) break;
      from = batch.at(-1)!.position;
    }
    t.ok(all.indexOf('digits-a') >= 0 && all.indexOf('digits-a') < all.indexOf('digits-b'), 'xid 9 comes before xid 10');
  });

  await t.test('readAll starts after the given position', async (t) => {
    const first = await store.readAll({ fromPosition: START, maxCount: 3 });
    const next = await store.readAll({ fromPosition: first[1]!.position, maxCount: 1 });
    t.equal(next[0]!.id, first[2]!.id);
  });
});
