// Group commit in the PostgreSQL store: appends made while a batch is in flight share the next
// batch's transaction, and each is still checked and written on its own.
import t from 'tap';
import pg from 'pg';
import { migrate } from '../../../infra/db.ts';
import { createPostgresEventStore } from '../../../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../../../infra/eventstore/postgres-schema.ts';
import { ConcurrencyError, type AppendResult } from '../../../infra/eventstore/port.ts';
import { freshDatabase } from '../../support/db.ts';

const metadata = { correlationId: 'c', actor: 'test', occurredAt: new Date(0).toISOString() };
const ev = (type: string, data: unknown = {}) => ({ type, data, metadata });

t.test('append batches', async (t) => {
  const db = await freshDatabase('batch');
  t.teardown(() => db.drop());
  await migrate(db.pool, eventStoreMigrations);
  const store = createPostgresEventStore({ pool: db.pool });
  t.teardown(() => store.close());

  /** One append to hold the batcher busy, then `calls` made at once: they form the next batch. */
  async function nextBatch<T>(calls: () => Array<Promise<T>>): Promise<PromiseSettledResult<T>[]> {
    const busy = store.append(`busy-${Math.random()}`, [ev('Busy')], { expectedRevision: 'no_stream' });
    const settled = Promise.allSettled(calls());
    await busy;
    return settled;
  }

  await t.test('concurrent appends share one transaction, each with its own revisions', async (t) => {
    await store.append('b-existing', [ev('A'), ev('B')], { expectedRevision: 'no_stream' });
    const results = await nextBatch(() => [
      store.append('b-new-1', [ev('X')], { expectedRevision: 'no_stream' }),
      store.append('b-existing', [ev('C')], { expectedRevision: 1n }),
      store.append('b-new-2', [ev('Y'), ev('Z')], { expectedRevision: 'any' }),
    ]);
    const ok = results.map((r) => (r.status === 'fulfilled' ? r.value : t.fail(String(r.reason)))) as AppendResult[];
    t.same(
      ok.map((r) => r.nextRevision),
      [0n, 2n, 1n],
    );
    t.equal(new Set(ok.map((r) => r.position.commit)).size, 1, 'one transaction id: one batch, one commit');
    t.same(
      (await store.readStream('b-existing')).map((e) => e.type),
      ['A', 'B', 'C'],
    );
    t.same(
      (await store.readStream('b-new-2')).map((e) => [e.revision, e.type]),
      [
        [0n, 'Y'],
        [1n, 'Z'],
      ],
    );
  });

  await t.test('a wrong revision fails that append alone; two appends to one stream are ordered', async (t) => {
    await store.append('b-conflict', [ev('A')], { expectedRevision: 'no_stream' });
    const results = await nextBatch(() => [
      store.append('b-conflict', [ev('Stale')], { expectedRevision: 5n }),
      store.append('b-other', [ev('Fine')], { expectedRevision: 'no_stream' }),
      store.append('b-conflict', [ev('First')], { expectedRevision: 0n }),
      store.append('b-conflict', [ev('Second')], { expectedRevision: 0n }),
      store.append('b-conflict', [ev('Must exist')], { expectedRevision: 'stream_exists' }),
    ]);
    t.match(results[0], { status: 'rejected', reason: { name: 'ConcurrencyError', actualRevision: 0n } });
    t.match(results[1], { status: 'fulfilled', value: { nextRevision: 0n } });
    t.match(results[2], { status: 'fulfilled', value: { nextRevision: 1n } });
    t.match(results[3], { status: 'rejected', reason: { name: 'ConcurrencyError', actualRevision: 1n } }, 'the second sees the first');
    t.match(results[4], { status: 'fulfilled', value: { nextRevision: 2n } });
    t.same(
      (await store.readStream('b-conflict')).map((e) => e.type),
      ['A', 'First', 'Must exist'],
    );
  });

  await t.test('an append the server refuses fails alone; the rest of its batch is written', async (t) => {
    // jsonb refuses the NUL character: the whole batch statement fails, then each append goes alone.
    const results = await nextBatch(() => [
      store.append('b-poison-ok-1', [ev('Fine')], { expectedRevision: 'no_stream' }),
      store.append('b-poison', [ev('Bad', { text: 'nul \u0000 inside' })], { expectedRevision: 'no_stream' }),
      store.append('b-poison-ok-2', [ev('Fine')], { expectedRevision: 'no_stream' }),
    ]);
    t.equal(results[0]!.status, 'fulfilled');
    t.match(results[1], { status: 'rejected', reason: { code: '22P05' } });
    t.equal(results[2]!.status, 'fulfilled');
    t.same(await store.readStream('b-poison'), []);
    t.equal((await store.readStream('b-poison-ok-2')).length, 1);
  });

  await t.test('reads made together share a statement; one the server refuses fails alone', async (t) => {
    await store.append('r-one', [ev('A'), ev('B')], { expectedRevision: 'any' });
    await store.append('r-two', [ev('C')], { expectedRevision: 'any' });
    const [one, bad, two, tail] = await Promise.allSettled([
      store.readStream('r-one'),
      store.readStream('r-\u0000'),
      store.readStream('r-two'),
      store.readStream('r-one', { fromRevision: 1n }),
    ]);
    t.match(one, {
      status: 'fulfilled',
      value: [
        { type: 'A', revision: 0n },
        { type: 'B', revision: 1n },
      ],
    });
    t.match(bad, { status: 'rejected', reason: { code: '22021' } });
    t.match(two, { status: 'fulfilled', value: [{ type: 'C' }] });
    t.match(tail, { status: 'fulfilled', value: [{ type: 'B' }] });
    t.equal(tail.status === 'fulfilled' && tail.value.length, 1);
  });

  await t.test('a revision another process holds uncommitted is waited for, then decided', async (t) => {
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    t.teardown(() => other.end());
    const appendOther = (stream: string) =>
      other.query(`SELECT * FROM append_events($1, 'no_stream', NULL, ARRAY[gen_random_uuid()], ARRAY['Other'], ARRAY['{}'::jsonb], ARRAY[$2::jsonb])`, [
        stream,
        JSON.stringify(metadata),
      ]);

    // The other writer commits: ours loses, with the committed revision.
    await other.query('BEGIN');
    await appendOther('b-held-1');
    // Settled at once: the outcome may arrive while the test still awaits the COMMIT.
    const losing = store.append('b-held-1', [ev('Ours')], { expectedRevision: 'no_stream' }).then(
      (r) => r,
      (e: unknown) => e,
    );
    const bystander = store.append('b-held-free', [ev('Ours')], { expectedRevision: 'no_stream' }).then(
      (r) => r,
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 100));
    await other.query('COMMIT');
    t.type(await losing, ConcurrencyError);
    t.match(await losing, { actualRevision: 0n });
    t.match(await bystander, { nextRevision: 0n });
    t.same(
      (await store.readStream('b-held-1')).map((e) => e.type),
      ['Other'],
    );

    // The other writer rolls back: ours is written.
    await other.query('BEGIN');
    await appendOther('b-held-2');
    const winning = store.append('b-held-2', [ev('Ours')], { expectedRevision: 'no_stream' }).then(
      (r) => r,
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 100));
    await other.query('ROLLBACK');
    t.match(await winning, { nextRevision: 0n });
    t.same(
      (await store.readStream('b-held-2')).map((e) => e.type),
      ['Ours'],
    );
  });

  await t.test('many writers, two stores: every stream ends dense, every success is there once', async (t) => {
    const second = createPostgresEventStore({ pool: db.pool });
    t.teardown(() => second.close());
    const written: string[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        const s = w % 2 ? store : second;
        for (let i = 0; i < 25; i++) {
          const stream = `b-race-${i % 5}`;
          const current = (await s.readStream(stream, { direction: 'backwards', maxCount: 1 }))[0]?.revision ?? -1n;
          const id = `${w}-${i}`;
          try {
            await s.append(stream, [ev('E', { id })], { expectedRevision: current === -1n ? 'no_stream' : current });
            written.push(id);
          } catch (err) {
            if (!(err instanceof ConcurrencyError)) throw err;
          }
        }
      }),
    );
    const all = (await Promise.all([0, 1, 2, 3, 4].map((i) => store.readStream(`b-race-${i}`)))).flat();
    for (let i = 0; i < 5; i++) {
      const revisions = all.filter((e) => e.streamName === `b-race-${i}`).map((e) => e.revision);
      t.same(
        revisions,
        revisions.map((_, k) => BigInt(k)),
        `b-race-${i} is dense`,
      );
    }
    t.same(all.map((e) => (e.data as { id: string }).id).sort(), [...written].sort(), 'exactly the acknowledged appends');
    t.ok(written.length >= 5, `${written.length} appends won`);
  });
});
