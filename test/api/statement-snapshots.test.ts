// A statement's fold snapshots (projections/statements/fold-snapshots.ts) on the service's store: the
// first statement of a long pool reads the whole stream and writes snapshots, the next one resumes
// from the latest that serves its period and says exactly the same; a snapshot of another fold
// version is ignored, one whose event is not the stream's at its revision is ignored and dropped,
// and the audit finds a snapshot that differs from a replay of its stream. The snapshots are written
// after the answer (the process's `snapshotWrites`): each step waits for them with `idle()`.
import t, { type Test } from 'tap';
import { buildStatement, type StatementDeps } from '../../api/routes/statements/build.ts';
import { simulatedPool } from '../../bench/audit.ts';
import { foldSnapshots, POOL_FOLD_VERSION } from '../../domain/pool/fold-snapshot.ts';
import { poolId as poolIdOf } from '../../domain/pool/state.ts';
import { auditSnapshots, saveSnapshots, statementHistory } from '../../projections/statements/fold-snapshots.ts';
import { poolHistory } from '../../projections/subscriptions/audit.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

const EVENTS = 2_600;

/** A simulated pool's events (seed `seed`) appended to the user's pool of the simulated agent, 1,000 at a time. */
async function appendPool(app: TestApp, userId: string, seed: number, length: number, agent?: string) {
  const { stream, events } = simulatedPool(seed, length);
  const [, simulatedAgent, walletContext] = stream.slice('pool-'.length).split('.') as [string, string, 'virtual' | 'real'];
  const agentId = agent ?? simulatedAgent;
  const poolId = poolIdOf(userId, agentId, walletContext);
  const streamName = `pool-${poolId}`;
  for (let i = 0; i < events.length; i += 1000) {
    const batch = events.slice(i, i + 1000).map(({ event, at }) => ({
      type: event.type,
      data: event.data,
      metadata: { correlationId: poolId, actor: 'test', occurredAt: at.toISOString() },
    }));
    await app.deps.store.append(streamName, batch, { expectedRevision: i === 0 ? 'no_stream' : BigInt(i - 1) });
  }
  return { agentId, walletContext, poolId, streamName, events };
}

/** The queries on the app's pool whose name starts with `prefix`, each with its rows once answered, until the test ends. */
function watchQueries(t: Test, app: TestApp, prefix: string): Array<{ name: string; rows: Array<Record<string, unknown>> }> {
  const seen: Array<{ name: string; rows: Array<Record<string, unknown>> }> = [];
  const pool = app.deps.pool;
  const query = pool.query;
  pool.query = (async (...args: unknown[]) => {
    const result = await (query as (...a: unknown[]) => Promise<{ rows: Array<Record<string, unknown>> }>).apply(pool, args);
    const name = (args[0] as { name?: string }).name;
    if (name?.startsWith(prefix)) seen.push({ name, rows: result.rows });
    return result;
  }) as typeof pool.query;
  t.teardown(() => {
    pool.query = query;
  });
  return seen;
}

t.test('statements resume from fold snapshots and say the same', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const user = await signIn(app, 'snapshot-user@example.test');
  const { agentId, walletContext, poolId, streamName, events } = await appendPool(app, user.userId, 2, EVENTS);
  const writes = app.deps.snapshotWrites;
  const deps: StatementDeps = { store: app.deps.store, pool: app.deps.pool, config: app.deps.config, snapshotWrites: writes };
  const at = events.at(-1)!.at;
  const from = new Date(at.getTime() - 3600_000);
  const request = { userId: user.userId, agentId, walletContext, at, from };
  const rows = async () =>
    (
      await app.deps.pool.query<{ revision: string; fold_version: number }>(
        'SELECT revision, fold_version FROM pool_fold_snapshots WHERE stream_name = $1 ORDER BY revision',
        [streamName],
      )
    ).rows;

  const cold = await buildStatement(deps, request);
  await writes.idle();
  const written = await rows();
  t.equal(written.length, 2, `the first statement wrote a snapshot about every 1,000 events (${written.map((r) => r.revision).join(', ')})`);
  t.ok(
    written.every((r) => r.fold_version === POOL_FOLD_VERSION),
    'of this fold version',
  );

  const resumed = await statementHistory(deps, poolId, at, from);
  t.equal(resumed.snapshot?.revision, Number(written.at(-1)!.revision), 'the next one resumes from the latest snapshot');
  t.equal(resumed.history.length, events.length - resumed.snapshot!.revision - 1, 'and reads only the events after it');
  t.same(await buildStatement(deps, request), cold, 'and says exactly the same');
  // other periods: the statement with the snapshots the same as the one without any
  const dropAll = () => app.deps.pool.query('DELETE FROM pool_fold_snapshots WHERE stream_name = $1', [streamName]);
  const times = events.map((e) => e.at.getTime());
  for (const since of [new Date(times[1000]! + 1), new Date(times[1500]!), new Date(times[2001]!), undefined]) {
    await dropAll();
    const whole = await buildStatement(deps, { ...request, from: since });
    await writes.idle();
    const again = await buildStatement(deps, { ...request, from: since });
    t.same(again, whole, `from ${since?.toISOString() ?? 'the first event'}: the same with the snapshots as without`);
  }

  let audit = await auditSnapshots(app.deps.store, app.deps.pool);
  t.same(audit, { match: 2, different: [], otherVersions: 0 }, 'the audit finds each snapshot equal to a replay of its stream');

  // another fold version: ignored, then replaced by this version's
  await app.deps.pool.query('UPDATE pool_fold_snapshots SET fold_version = fold_version + 1000 WHERE stream_name = $1', [streamName]);
  t.equal((await statementHistory(deps, poolId, at, from)).snapshot, undefined, "another fold version's snapshots are ignored");
  t.same(await buildStatement(deps, request), cold, 'the statement is the same');
  await writes.idle();
  t.same(
    (await rows()).map((r) => r.fold_version),
    [POOL_FOLD_VERSION, POOL_FOLD_VERSION],
    "written again at this version, the other version's dropped",
  );

  // a snapshot whose event is not the stream's at its revision
  const latest = written.at(-1)!.revision;
  await app.deps.pool.query(
    `UPDATE pool_fold_snapshots SET event_id = 'another-event', body = regexp_replace(body, '"eventId":"[^"]*"', '"eventId":"another-event"')
      WHERE stream_name = $1 AND revision = $2`,
    [streamName, latest],
  );
  const mismatched = await statementHistory(deps, poolId, at, from);
  t.equal(mismatched.snapshot, undefined, 'a snapshot whose event the stream does not hold at its revision is ignored');
  t.equal(mismatched.history.length, events.length, 'the whole stream is read');
  t.same(await buildStatement(deps, request), cold, 'the statement is the same');
  await writes.idle();
  t.equal((await rows()).length, 2, 'it was dropped and written again from the stream');

  // the audit finds a snapshot that differs from the replay
  await app.deps.pool.query(
    `UPDATE pool_fold_snapshots SET body = replace(body, '"highWaterMark":', '"highWaterMark":1') WHERE stream_name = $1 AND revision = $2`,
    [streamName, latest],
  );
  audit = await auditSnapshots(app.deps.store, app.deps.pool);
  t.same(audit.different, [{ streamName, revision: Number(latest) }], 'the audit lists a snapshot that differs from the replay');
});

t.test('a statement whose due snapshots are stored folds and writes none again; one missing is written', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const user = await signIn(app, 'snapshot-stored-user@example.test');
  const { agentId, walletContext, poolId, streamName, events } = await appendPool(app, user.userId, 4, EVENTS);
  const handed: string[] = [];
  const writes = app.deps.snapshotWrites;
  const later: StatementDeps['snapshotWrites'] = {
    later(stream, write, after) {
      handed.push(stream);
      writes.later(stream, write, after);
    },
  };
  const deps: StatementDeps = { store: app.deps.store, pool: app.deps.pool, config: app.deps.config, snapshotWrites: later };
  const at = events.at(-1)!.at;
  const whole = { userId: user.userId, agentId, walletContext, at };
  const revisions = async () =>
    (
      await app.deps.pool.query<{ revision: string }>(
        'SELECT revision FROM pool_fold_snapshots WHERE stream_name = $1 AND fold_version = $2 ORDER BY revision',
        [streamName, POOL_FOLD_VERSION],
      )
    ).rows.map((r) => Number(r.revision));
  const watched = watchQueries(t, app, 'pool-fold-snapshot-');
  const queries = () => watched.map((q) => q.name);

  const first = await buildStatement(deps, whole);
  t.same(handed, [streamName], "the first whole-history statement hands its snapshots' write");
  await writes.idle();
  const stored = await revisions();
  t.equal(stored.length, 2, 'which writes them');

  handed.length = 0;
  watched.length = 0;
  t.same(await buildStatement(deps, whole), first, 'the next one says the same');
  await writes.idle();
  t.same(handed, [], 'and hands no write: its due snapshots are stored');
  t.same(queries(), ['pool-fold-snapshot-stored'], 'one query for their revisions, no insert');
  const direct = await statementHistory({ store: app.deps.store, pool: app.deps.pool }, poolId, at, undefined);
  t.equal(direct.written, 0, 'written before the answer (the audit statement), none either');
  t.notOk(queries().includes('pool-fold-snapshot-save'), 'no insert');

  // a period resumed from the first snapshot whose events reach past the second, stored
  const times = events.map((e) => e.at.getTime());
  const resumed = await statementHistory(deps, poolId, at, new Date(times[stored[0]!]! + 1));
  t.equal(resumed.snapshot?.revision, stored[0], 'a later period resumes from the first snapshot');
  t.ok(resumed.history.length > 1000, 'and reads past where the second is due');
  t.same(handed, [], 'which is stored: no write');

  // one missing is written again, the same
  await app.deps.pool.query('DELETE FROM pool_fold_snapshots WHERE stream_name = $1 AND revision = $2', [streamName, stored[1]]);
  watched.length = 0;
  t.same(await buildStatement(deps, whole), first, 'with a snapshot missing, the statement is the same');
  t.same(handed, [streamName], 'and hands the write');
  await writes.idle();
  t.same(await revisions(), stored, 'which writes the missing one again');
  t.equal(queries().filter((q) => q === 'pool-fold-snapshot-save').length, 1, 'in one insert');
});

t.test('the audit reads the snapshots a page of streams at a time', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const user = await signIn(app, 'snapshot-audit-user@example.test');
  // five pools, each with a snapshot about every 20 events of its 90 (a stored snapshot stands at any revision where a command ends)
  let total = 0;
  for (let i = 0; i < 5; i++) {
    const { poolId, streamName } = await appendPool(app, user.userId, 20 + i, 90, `audit-agent-${i}`);
    const snapshots = foldSnapshots(await poolHistory(app.deps.store, poolId), null, 20);
    total += snapshots.length;
    await saveSnapshots(app.deps.pool, streamName, snapshots);
  }
  const streams = (await app.deps.pool.query<{ stream_name: string }>('SELECT DISTINCT stream_name FROM pool_fold_snapshots ORDER BY stream_name')).rows.map(
    (r) => r.stream_name,
  );
  t.equal(streams.length, 5);
  const audit = await auditSnapshots(app.deps.store, app.deps.pool);
  t.same(audit, { match: total, different: [], otherVersions: 0 }, `the default page: each of the ${total} snapshots matches`);

  // the last stream's (the third page's of two streams) latest snapshot tampered, the second page's one of another version
  const last = streams.at(-1)!;
  const { revision } = (
    await app.deps.pool.query<{ revision: string }>(
      `UPDATE pool_fold_snapshots SET body = replace(body, '"highWaterMark":', '"highWaterMark":1')
        WHERE stream_name = $1 AND revision = (SELECT max(revision) FROM pool_fold_snapshots WHERE stream_name = $1) RETURNING revision`,
      [last],
    )
  ).rows[0]!;
  await app.deps.pool.query(
    `INSERT INTO pool_fold_snapshots (stream_name, fold_version, revision, event_id, latest_ms, body)
      SELECT stream_name, fold_version + 1000, revision, event_id, latest_ms, body FROM pool_fold_snapshots WHERE stream_name = $1 AND revision = (
        SELECT min(revision) FROM pool_fold_snapshots WHERE stream_name = $1)`,
    [streams[2]],
  );
  const watched = watchQueries(t, app, 'pool-fold-snapshot-audit-page');
  const paged = await auditSnapshots(app.deps.store, app.deps.pool, { pageStreams: 2 });
  const pages = watched.map((q) => [...new Set(q.rows.map((r) => r.stream_name))]);
  t.same(pages, [streams.slice(0, 2), streams.slice(2, 4), streams.slice(4), []], 'read two streams at a time, in order, until a page is empty');
  t.same(
    paged,
    { match: total - 1, different: [{ streamName: last, revision: Number(revision) }], otherVersions: 1 },
    "the last page's tampered snapshot is reported, the other version counted, the rest match",
  );
  t.same(await auditSnapshots(app.deps.store, app.deps.pool), paged, 'as the default page says');

  // streams of other versions only, whose names sort apart in the C collation and in a linguistic one ('.' weighs nothing there),
  // at every page's boundary (a page of one stream): each read once, in the column's own order, counted
  await app.deps.pool.query(
    `INSERT INTO pool_fold_snapshots (stream_name, fold_version, revision, event_id, latest_ms, body)
      SELECT name, $1::int + 1000, 0, gen_random_uuid()::text, 0, '{}' FROM unnest($2::text[]) AS name`,
    [POOL_FOLD_VERSION, ['pool-a.b', 'pool-ab', 'pool-a-c', 'pool-AB']],
  );
  const everyStream = (
    await app.deps.pool.query<{ stream_name: string }>('SELECT DISTINCT stream_name FROM pool_fold_snapshots ORDER BY stream_name')
  ).rows.map((r) => r.stream_name);
  watched.length = 0;
  const one = await auditSnapshots(app.deps.store, app.deps.pool, { pageStreams: 1 });
  t.same(
    watched.map((q) => [...new Set(q.rows.map((r) => r.stream_name))]),
    [...everyStream.map((name) => [name]), []],
    'a page of one stream each, every stream once, in order',
  );
  t.same(one, { ...paged, otherVersions: 5 }, 'the other versions counted, the same snapshots checked');
  await t.rejects(auditSnapshots(app.deps.store, app.deps.pool, { pageStreams: 0 }), RangeError, 'a page of no stream is refused');
});

t.test('over HTTP, the first statement answers before its snapshots are written, then writes them', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const user = await signIn(app, 'snapshot-http-user@example.test');
  const { stream, events } = simulatedPool(3, 1_500);
  const [, agentId, walletContext] = stream.slice('pool-'.length).split('.') as [string, string, 'virtual' | 'real'];
  const streamName = `pool-${poolIdOf(user.userId, agentId, walletContext)}`;
  const batch = events.map(({ event, at }) => ({
    type: event.type,
    data: event.data,
    metadata: { correlationId: streamName, actor: 'test', occurredAt: at.toISOString() },
  }));
  await app.deps.store.append(streamName, batch, { expectedRevision: 'no_stream' });
  const count = async () =>
    (await app.deps.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pool_fold_snapshots WHERE stream_name = $1', [streamName])).rows[0]!.n;
  const path = (from: Date) =>
    `/api/v1/users/me/subscriptions/${agentId}/statement?walletContext=${walletContext}&at=${encodeURIComponent(events.at(-1)!.at.toISOString())}&from=${encodeURIComponent(from.toISOString())}`;
  const from = new Date(events.at(-1)!.at.getTime() - 60_000);
  const get = () => fetch(`${app.url}${path(from)}`, { headers: { authorization: `Bearer ${user.accessToken}` } });

  // the route hands the write with its answer to wait for, and the write starts once the answer is sent
  const later = app.deps.snapshotWrites.later.bind(app.deps.snapshotWrites);
  const handed: boolean[] = [];
  app.deps.snapshotWrites.later = (streamName, write, after) => {
    let sent = false;
    void Promise.resolve(after).then(() => {
      sent = true;
    });
    handed.push(after !== undefined);
    later(
      streamName,
      async () => {
        t.ok(sent, 'the snapshots are folded and written once the answer is sent');
        return write();
      },
      after,
    );
  };
  t.teardown(() => {
    app.deps.snapshotWrites.later = later;
  });
  const cold = await get();
  const coldBody = await cold.json();
  t.equal(cold.status, 200);
  t.same(handed, [true], "one write handed, with the answer's end to wait for");
  await app.deps.snapshotWrites.idle();
  t.equal(await count(), 1, 'then the snapshot is written');
  const warm = await get();
  t.same(await warm.json(), coldBody, 'the next statement resumes from it and says the same');
});
