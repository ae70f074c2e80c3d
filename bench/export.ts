// The exports' figure: rows per second written to CSV by the shared export module
// (projections/exports, what GET /api/admin/exports/ledger and `npm run audit -- export` run) over
// the PostgreSQL store's global log of pool events (target >= 100,000 rows/s). The events are seeded
// by one INSERT … SELECT (test/support/seed-pool-events.ts): pools of a follow then credits. Two
// passes, the better one reported with the bytes written, the CPU per row of this process and the
// RSS the pass grew by.
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { migrate } from '../infra/db.ts';
import { createPostgresEventStore } from '../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../infra/eventstore/postgres-schema.ts';
import { exportStream } from '../projections/exports/encode.ts';
import { allLedgerSource } from '../projections/exports/sources.ts';
import { freshDatabase } from '../test/support/db.ts';
import { seedPoolEvents } from '../test/support/seed-pool-events.ts';
import { processCpuMs } from './cpu.ts';
import { fmt, report, verdict } from './measure.ts';

const TARGET = 100_000;
const PER_POOL = 10_000;

export async function exportBench(events: number): Promise<void> {
  const pools = Math.max(1, Math.ceil(events / PER_POOL));
  const db = await freshDatabase('bench-export');
  try {
    await migrate(db.pool, eventStoreMigrations);
    const store = createPostgresEventStore({ pool: db.pool, connectionString: db.url });
    const seeded = performance.now();
    await seedPoolEvents(db.pool, pools, PER_POOL);
    const seedSeconds = (performance.now() - seeded) / 1000;
    const passes = [];
    for (let pass = 0; pass < 2; pass++) {
      let rows = 0;
      let bytes = 0;
      const rss = process.memoryUsage().rss;
      let peak = rss;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 20);
      const cpu = processCpuMs(process.pid);
      const started = performance.now();
      await pipeline(
        exportStream(allLedgerSource(store), 'csv', (n) => {
          rows = n;
        }),
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            bytes += chunk.length;
            done();
          },
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      passes.push({
        rows,
        bytes,
        seconds,
        rate: rows / seconds,
        cpuPerRowUs: ((processCpuMs(process.pid) - cpu) * 1000) / rows,
        grewMb: (peak - rss) / 2 ** 20,
      });
    }
    await store.close();
    const best = passes.reduce((a, b) => (b.rate > a.rate ? b : a));
    console.log(`\nexport: ${fmt(pools * PER_POOL)} pool events (${pools} pools) seeded in ${fmt(seedSeconds, 1)} s, exported as CSV twice`);
    report([
      [
        'ledger export to CSV',
        `${fmt(best.rate)} rows/s`,
        `${fmt(best.rows)} rows, ${fmt(best.bytes / 2 ** 20)} MB in ${fmt(best.seconds, 2)} s, ${fmt(best.cpuPerRowUs, 1)} us CPU/row, RSS +${fmt(best.grewMb)} MB; ` +
          `target >= ${fmt(TARGET)}: ${verdict(best.rate >= TARGET)}`,
      ],
    ]);
  } finally {
    await db.drop();
  }
}
