// The PostgreSQL store's global read shows a transaction's events once every older transaction of
// the server has ended, in any database (the snapshot's xmin is the cluster's). Tests that compare
// the log with the read models (a rebuild against the live tables) must wait for the tail that is
// committed, not the tail the global read shows at that moment: test/support/log.ts.
import pg from 'pg';
import t from 'tap';
import { startTestApp } from '../../support/app.ts';
import { freshDatabase } from '../../support/db.ts';
import { committedLog, committedTail } from '../../support/log.ts';

t.test("another database's open transaction hides the newest events from the global read; the committed tail does not", async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const other = await freshDatabase('horizon');
  t.teardown(() => other.drop());
  const meta = { correlationId: 'c', actor: 'test', occurredAt: new Date().toISOString() };
  await app.deps.store.append('horizon-1', [{ type: 'Before', data: {}, metadata: meta }], { expectedRevision: 'no_stream' });

  const holder = new pg.Client({ connectionString: other.url });
  holder.on('error', () => {}); // the database's drop ends it if the test stopped before its COMMIT
  await holder.connect();
  t.teardown(() => holder.end().catch(() => {}));
  await holder.query('BEGIN');
  await holder.query('SELECT pg_current_xact_id()'); // an xid, in a database the store never writes
  const after = await app.deps.store.append('horizon-2', [{ type: 'After', data: {}, metadata: meta }], { expectedRevision: 'no_stream' });

  const shown = await app.deps.store.readAll({ maxCount: 100_000 });
  t.notOk(
    shown.some((e) => e.streamName === 'horizon-2'),
    'the global read does not show the event yet',
  );
  t.same(await committedTail(app), after.position, 'the committed tail is the event appended last');

  const read = committedLog(app);
  await new Promise((resolve) => setTimeout(resolve, 100));
  await holder.query('COMMIT');
  t.same(
    (await read).filter((e) => e.streamName.startsWith('horizon-')).map((e) => e.type),
    ['Before', 'After'],
    'the committed log waits until the global read shows it',
  );
});
