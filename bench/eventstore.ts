// The event store's figures: (a) raw ceiling, (b) our PostgreSQL store, (c) b/a, (d) appends through the real
// client to the EventStoreDB peer, (e) global-log read, plus the exactly-once run at scale.
import { randomUUID } from 'node:crypto';
import { createPool, migrate } from '../infra/db.ts';
import { createEsdbEventStore } from '../infra/eventstore/esdb.ts';
import { createPostgresEventStore } from '../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../infra/eventstore/postgres-schema.ts';
import type { Position, RecordedEvent } from '../infra/eventstore/port.ts';
import { checkpointMigrations } from '../projections/checkpoints.ts';
import { ProjectionRunner } from '../projections/runner.ts';
import { freshDatabase } from '../test/support/db.ts';
import { startEsdbPeer } from '../test/support/esdb-peer/index.ts';
import { statsProjector } from '../test/support/stats-projector.ts';
import { runWriters } from '../test/support/writers.ts';
import { closedLoop, fmt, percentile, report, verdict } from './measure.ts';

const CLIENTS = 16;
const meta = () => ({ correlationId: randomUUID(), actor: 'bench', occurredAt: new Date().toISOString() });

/** (a) 16 pg clients, single-row INSERT autocommit into a plain events table. */
async function rawCeiling(url: string, seconds: number): Promise<number> {
  const pool = createPool(url, CLIENTS);
  await pool.query(
    'CREATE TABLE IF NOT EXISTS plain_events (id bigserial PRIMARY KEY, stream text NOT NULL, type text NOT NULL, data jsonb NOT NULL, metadata jsonb NOT NULL)',
  );
  const run = await closedLoop(CLIENTS, seconds, () =>
    pool.query('INSERT INTO plain_events (stream, type, data, metadata) VALUES ($1, $2, $3, $4)', [randomUUID(), 'Raw', '{"n":1}', JSON.stringify(meta())]),
  );
  await pool.end();
  return run.perSecond;
}

export async function eventStoreBench(seconds: number, scaleEvents: number) {
  const db = await freshDatabase('bench_es', { durable: true });
  try {
    await migrate(db.pool, [...eventStoreMigrations, ...checkpointMigrations, ...statsProjector.migrations]);
    const raw = await rawCeiling(db.url, seconds);

    const pool = createPool(db.url, CLIENTS + 2);
    const store = createPostgresEventStore({ pool, connectionString: db.url });
    const newStreams = await closedLoop(CLIENTS, seconds, () =>
      store.append(randomUUID(), [{ type: 'Bench', data: { n: 1 }, metadata: meta() }], { expectedRevision: 'no_stream' }),
    );
    const revisions = Array.from({ length: CLIENTS }, () => ({ name: randomUUID(), revision: -1n }));
    const existing = await closedLoop(CLIENTS, seconds, async (c) => {
      const s = revisions[c]!;
      const r = await store.append(s.name, [{ type: 'Bench', data: { n: 1 }, metadata: meta() }], {
        expectedRevision: s.revision === -1n ? 'no_stream' : s.revision,
      });
      s.revision = r.nextRevision;
    });

    const peer = await startEsdbPeer();
    const esdb = createEsdbEventStore(peer.url);
    const peerRun = await closedLoop(CLIENTS, seconds, () =>
      esdb.append(randomUUID(), [{ type: 'Bench', data: { n: 1 }, metadata: meta() }], { expectedRevision: 'no_stream' }),
    );
    await esdb.close();
    await peer.stop();

    // The exactly-once run at scale: 16 writers, a live subscriber, a projector.
    const runner = new ProjectionRunner(store, pool, [statsProjector]);
    await runner.start();
    const before = (await pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n;
    const received: RecordedEvent[] = [];
    const lastBefore = await lastPosition(store);
    const sub = store.subscribeAll({ fromPosition: lastBefore });
    const following = (async () => {
      for await (const e of sub) {
        received.push(e);
        if (received.length >= scaleEvents) break;
      }
    })();
    const t0 = performance.now();
    await runWriters(db.url, { writers: CLIENTS, events: scaleEvents, holdOpenMs: 5 });
    const writeSeconds = (performance.now() - t0) / 1000;
    await following;
    await sub.close();
    await runner.stop();
    const unique = new Set(received.map((e) => e.id)).size;
    const disagree = (
      await pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM (SELECT position, lag(position) OVER (ORDER BY transaction_id, position) AS previous FROM events) s WHERE position < previous`,
      )
    ).rows[0]!.n;

    // (e) the whole global log in batches of 1,000.
    // Node's CPU per event beside the rate: on shared cores the rate moves with other load, the
    // CPU time much less (bench/global-read.ts splits Node and PostgreSQL and compares variants).
    let read = 0;
    let from: Position | undefined;
    const cpu0 = process.cpuUsage();
    const r0 = performance.now();
    for (;;) {
      const batch = await store.readAll({ fromPosition: from, maxCount: 1000 });
      read += batch.length;
      if (batch.length < 1000) break;
      from = batch[batch.length - 1]!.position;
    }
    const readPerSecond = read / ((performance.now() - r0) / 1000);
    const readCpu = process.cpuUsage(cpu0);
    const readCpuUs = (readCpu.user + readCpu.system) / read;
    await store.close();
    await pool.end();

    const b = Math.min(newStreams.perSecond, existing.perSecond);
    console.log('\nEvent store (PostgreSQL, durable commits, 16 concurrent clients)');
    report([
      ['(a) raw ceiling: INSERT autocommit', `${fmt(raw)} /s`, 'baseline'],
      [
        '(b) append, new streams',
        `${fmt(newStreams.perSecond)} /s`,
        `p50 ${fmt(percentile(newStreams.latenciesMs, 50), 1)} ms, p99 ${fmt(percentile(newStreams.latenciesMs, 99), 1)} ms`,
      ],
      [
        '(b) append, existing streams',
        `${fmt(existing.perSecond)} /s`,
        `p50 ${fmt(percentile(existing.latenciesMs, 50), 1)} ms, p99 ${fmt(percentile(existing.latenciesMs, 99), 1)} ms`,
      ],
      ['(c) b / a (lower of the two b)', fmt(b / raw, 2), `target >= 0.5: ${verdict(b / raw >= 0.5)}`],
      [
        '(d) peer append via real client',
        `${fmt(peerRun.perSecond)} /s`,
        `p50 ${fmt(percentile(peerRun.latenciesMs, 50), 2)} ms, p99 ${fmt(percentile(peerRun.latenciesMs, 99), 2)} ms`,
      ],
      [
        '(e) global-log read, batches of 1000',
        `${fmt(readPerSecond)} ev/s`,
        `${fmt(read)} events, Node CPU ${fmt(readCpuUs, 2)} us/event; target >= 200,000: ${verdict(readPerSecond >= 200_000)}`,
      ],
      [
        `exactly-once at ${fmt(scaleEvents)} events`,
        `${unique === scaleEvents && received.length === scaleEvents ? 'exact' : 'MISMATCH'}`,
        `received ${fmt(received.length)}, unique ${fmt(unique)}, written in ${fmt(writeSeconds, 1)} s (${before} before)`,
      ],
      ['rows: commit order != position order', fmt(Number(disagree)), 'handled by ordering on (transaction id, position)'],
    ]);
    return { raw };
  } finally {
    await db.drop();
  }
}

async function lastPosition(store: ReturnType<typeof createPostgresEventStore>): Promise<Position | undefined> {
  let from: Position | undefined;
  for (;;) {
    const batch = await store.readAll({ fromPosition: from, maxCount: 5000 });
    if (batch.length) from = batch[batch.length - 1]!.position;
    if (batch.length < 5000) return from;
  }
}
