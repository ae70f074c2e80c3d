import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import t from 'tap';
import { migrate } from '../../infra/db.ts';
import { createPostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../../infra/eventstore/postgres-schema.ts';
import { checkpointMigrations, readCheckpoint } from '../../projections/checkpoints.ts';
import { rebuild } from '../../projections/rebuild.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { statsProjector, statsSnapshot } from '../support/stats-projector.ts';
import { runWriters } from '../support/writers.ts';

function startProjectorProcess(db: TestDatabase, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import=tsx', 'test/support/projector-process.ts'], {
    env: { ...process.env, DATABASE_URL: db.url, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const waitLine = (wanted: string) => new Promise<void>((resolve) => lines.on('line', (l) => l === wanted && resolve()));
  return { child, waitLine };
}

async function stop(child: ChildProcess, signal: NodeJS.Signals) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}

async function appliedCount(db: TestDatabase): Promise<number> {
  const { rows } = await db.pool.query<{ n: string }>('SELECT coalesce(sum(events), 0)::text AS n FROM stream_stats');
  return Number(rows[0]!.n);
}

async function until(check: () => Promise<boolean>, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function setup(t: { teardown(fn: () => unknown): void }) {
  const db = await freshDatabase('proj');
  t.teardown(() => db.drop());
  await migrate(db.pool, [...eventStoreMigrations, ...checkpointMigrations, ...statsProjector.migrations]);
  const store = createPostgresEventStore({ pool: db.pool });
  t.teardown(() => store.close());
  return { db, store };
}

function expectedSnapshot(perStream: Map<string, number>) {
  return [...perStream.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, n]) => ({ name, events: String(n) }));
}

t.test('a projector killed mid-batch resumes, and its read model equals a rebuild', async (t) => {
  const { db, store } = await setup(t);
  const { perStream } = await runWriters(db.url, { writers: 8, events: 6000, holdOpenMs: 2 });

  const first = startProjectorProcess(db, { PAUSE_IN_BATCH: '3' });
  t.teardown(() => stop(first.child, 'SIGKILL'));
  await first.waitLine('mid-batch');
  const inFlight = await db.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'`,
  );
  t.ok(Number(inFlight.rows[0]!.n) >= 1, 'the batch transaction is open when the process is killed');
  await stop(first.child, 'SIGKILL');

  const before = await appliedCount(db);
  t.ok(before > 0 && before < 6000, `two batches committed before the kill (${before} events), the third was lost`);
  const checkpoint = await readCheckpoint(db.pool, statsProjector.name);
  t.ok(checkpoint.prepare > 0n, 'the checkpoint stayed with the last committed batch');

  const second = startProjectorProcess(db);
  t.teardown(() => stop(second.child, 'SIGKILL'));
  await until(async () => (await appliedCount(db)) >= 6000);
  await stop(second.child, 'SIGTERM');

  const live = await statsSnapshot(db.pool);
  t.equal(
    live.reduce((s, r) => s + Number(r.events), 0),
    6000,
    'every event applied exactly once after the restart',
  );
  t.same(
    live.map((r) => ({ name: r.stream_name, events: r.events })),
    expectedSnapshot(perStream),
    'per stream, as written',
  );
  await rebuild(store, db.pool, statsProjector);
  t.same(await statsSnapshot(db.pool), live, 'the restarted read model equals a rebuild');
});

t.test('two projector processes on one read model never apply an event twice', async (t) => {
  const { db, store } = await setup(t);
  const a = startProjectorProcess(db);
  const b = startProjectorProcess(db);
  t.teardown(() => Promise.all([stop(a.child, 'SIGKILL'), stop(b.child, 'SIGKILL')]));
  await Promise.all([a.waitLine('started'), b.waitLine('started')]);
  const { perStream } = await runWriters(db.url, { writers: 8, events: 6000, holdOpenMs: 2 });
  await until(async () => (await appliedCount(db)) >= 6000);
  await new Promise((r) => setTimeout(r, 300)); // a double apply would land here
  await Promise.all([stop(a.child, 'SIGTERM'), stop(b.child, 'SIGTERM')]);

  const live = await statsSnapshot(db.pool);
  t.equal(
    live.reduce((s, r) => s + Number(r.events), 0),
    6000,
    'each event applied once',
  );
  t.same(
    live.map((r) => ({ name: r.stream_name, events: r.events })),
    expectedSnapshot(perStream),
  );
  await rebuild(store, db.pool, statsProjector);
  t.same(await statsSnapshot(db.pool), live, 'equal to a rebuild');
});
