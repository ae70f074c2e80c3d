// The PostgreSQL store's global read shows a transaction's events once every older transaction of
// the server has ended (the snapshot's xmin is the server's). A transaction of another database
// cannot write our events, so a live read held back past HELD_BACK_MS looks past those
// (infra/eventstore/postgres-reads.ts READ_ALL_PAST_OTHERS_SQL); one of ours still holds back every
// event after it until it ends. The tests' committed tail (test/support/log.ts) is checked here too.
import pg from 'pg';
import t from 'tap';
import type { Test } from 'tap';
import type { RecordedEvent } from '../../../infra/eventstore/port.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { freshDatabase } from '../../support/db.ts';
import { committedLog, committedTail } from '../../support/log.ts';

const meta = { correlationId: 'c', actor: 'test', occurredAt: new Date(0).toISOString() };

/** A transaction holding an xid, open on `url` until `end` (ended by the teardown at the latest). */
async function holdXid(t: Test, url: string): Promise<{ end(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: url });
  holder.on('error', () => {}); // the database's drop ends it if the test stopped before its end
  await holder.connect();
  let ended = false;
  const end = async () => {
    if (ended) return;
    ended = true;
    await holder.query('COMMIT');
    await holder.end();
  };
  t.teardown(() => end().catch(() => {}));
  await holder.query('BEGIN');
  await holder.query('SELECT pg_current_xact_id()');
  return { end };
}

const append = (app: TestApp, stream: string, type: string) =>
  app.deps.store.append(stream, [{ type, data: {}, metadata: meta }], { expectedRevision: 'no_stream' });

/** The types a live subscription from the start of the log has received of streams starting `prefix`, as they come. */
function follow(t: Test, app: TestApp, prefix: string): { seen: string[]; until(n: number, ms: number): Promise<boolean> } {
  const subscription = app.deps.store.subscribeAll();
  t.teardown(() => subscription.close());
  const seen: string[] = [];
  void (async () => {
    for await (const event of subscription as AsyncIterable<RecordedEvent>) if (event.streamName.startsWith(prefix)) seen.push(event.type);
  })().catch(() => {});
  const until = async (n: number, ms: number) => {
    const deadline = Date.now() + ms;
    while (seen.length < n && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    return seen.length >= n;
  };
  return { seen, until };
}

t.test("a live read looks past another database's open transaction; one of ours holds back what comes after it", async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const other = await freshDatabase('horizon');
  t.teardown(() => other.drop());
  const live = follow(t, app, 'h1-');

  await append(app, 'h1-a', 'First');
  t.ok(await live.until(1, 5_000), 'the subscription is live');
  const elsewhere = await holdXid(t, other.url);
  await append(app, 'h1-b', 'AfterOther');
  const plain = (await app.deps.store.readAll({ maxCount: 100_000 })).filter((e) => e.streamName.startsWith('h1-')).map((e) => e.type);
  t.same(plain, ['First'], 'the plain global read is held back by the server-wide xmin');
  const started = Date.now();
  t.ok(await live.until(2, 2_000), "the live read is not: another database's transaction cannot write our events");
  t.ok(Date.now() - started < 1_000, `shown in ${Date.now() - started} ms, while the other transaction stays open`);

  const ours = await holdXid(t, app.databaseUrl);
  const late = await append(app, 'h1-c', 'AfterOurs');
  t.notOk(await live.until(3, 300), 'one of ours (started later than the other) holds back what committed after it');
  t.same(await committedTail(app), late.position, 'the committed tail is the event appended last');

  const log = committedLog(app);
  await new Promise((resolve) => setTimeout(resolve, 50));
  await ours.end();
  await elsewhere.end();
  t.ok(await live.until(3, 5_000), 'once ours ends, the live read shows it');
  t.same(live.seen, ['First', 'AfterOther', 'AfterOurs'], 'each once, in order');
  t.same(
    (await log).filter((e) => e.streamName.startsWith('h1-')).map((e) => e.type),
    ['First', 'AfterOther', 'AfterOurs'],
    'the committed log waited for the global read to show them all',
  );
});
