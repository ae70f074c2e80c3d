// An export runs in constant memory: 1,000,000 pool events (20 pools of 50,000), seeded straight
// into a test database's events table in the shape the PostgreSQL store reads
// (test/support/seed-pool-events.ts), exported as CSV by the shared module the routes and the CLI
// use (projections/exports), through a byte stream into a sink that hashes what it gets. The RSS
// is sampled during the export: it grows by less than 50 MB in all (the acceptance of ledger
// exports; docs/decisions.md, "Export memory: garbage per line"), its peak over the second half no
// higher than over the first by more than a little, and the file must be whole (every line, the
// trailer's count and digest). No V8 flag: the process runs as `npm start` and the CLI run.
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import t from 'tap';
import { migrate } from '../../../infra/db.ts';
import { createPostgresEventStore } from '../../../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../../../infra/eventstore/postgres-schema.ts';
import { exportChunks, exportStream } from '../../../projections/exports/encode.ts';
import { allLedgerSource } from '../../../projections/exports/sources.ts';
import { freshDatabase } from '../../support/db.ts';
import { seedPoolEvents } from '../../support/seed-pool-events.ts';

const POOLS = 20;
const PER_POOL = 50_000;
const EVENTS = POOLS * PER_POOL;
const MB = 1024 * 1024;

t.test(`exporting ${EVENTS.toLocaleString('en')} events runs in memory that does not grow with the log`, async (t) => {
  const db = await freshDatabase('export-memory');
  t.teardown(() => db.drop());
  await migrate(db.pool, eventStoreMigrations);
  const store = createPostgresEventStore({ pool: db.pool, connectionString: db.url });
  t.teardown(() => store.close());
  const seeded = performance.now();
  await seedPoolEvents(db.pool, POOLS, PER_POOL);
  t.comment(`seeded ${EVENTS} events in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);

  // Warm-up: the export's first 200,000 lines, so the heap's young generation has grown to what a
  // page's work needs before the baseline is taken (it grows over about that many lines, then stays
  // flat); what the whole export adds after it is what would grow with the log.
  let warmed = 0;
  const warmUp = exportChunks(allLedgerSource(store), 'csv', (n) => {
    warmed = n;
  });
  for await (const _chunk of warmUp) if (warmed >= 200_000) break;

  const hash = createHash('sha256');
  let last: Buffer = Buffer.alloc(0);
  let bytes = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      // the trailer is its own last chunk (exportChunks): the chunk before it is hashed when the next comes
      hash.update(last);
      last = chunk;
      done();
    },
  });
  const baseline = process.memoryUsage().rss;
  // the peak over the export's first half and over its second: flat memory shows as no growth between them
  const peaks = [baseline, baseline];
  let rows = 0;
  const sampler = setInterval(() => {
    const half = rows < EVENTS / 2 ? 0 : 1;
    peaks[half] = Math.max(peaks[half]!, process.memoryUsage().rss);
  }, 20);
  const started = performance.now();
  await pipeline(
    exportStream(allLedgerSource(store), 'csv', (n) => {
      rows = n;
    }),
    sink,
  );
  clearInterval(sampler);
  peaks[1] = Math.max(peaks[1]!, process.memoryUsage().rss);
  const seconds = (performance.now() - started) / 1000;
  const [first, second] = peaks.map((p) => (p - baseline) / MB) as [number, number];
  t.comment(
    `exported ${rows} rows (${(bytes / MB).toFixed(0)} MB) in ${seconds.toFixed(1)} s, ${Math.round(rows / seconds)} rows/s; ` +
      `RSS grew ${first.toFixed(1)} MB over the first half, ${second.toFixed(1)} MB by the end`,
  );

  t.equal(rows, EVENTS, 'every event a line');
  const trailer = /^#trailer count=(\d+) sha256=([0-9a-f]{64})\r\n$/.exec(last.toString('utf8'));
  t.ok(trailer, 'the file ends with its trailer');
  t.equal(Number(trailer?.[1]), EVENTS);
  t.equal(trailer?.[2], hash.digest('hex'), 'the digest of every byte before the trailer');
  t.ok(bytes > EVENTS * 100, 'a line of a hundred bytes or more per event');
  // The file is 179 MB: an export that held its lines, or its events, would grow by more than that.
  t.ok(Math.max(first, second) < 50, `RSS grew ${Math.max(first, second).toFixed(1)} MB in all (< 50, the acceptance)`);
  t.ok(second - first < 30, `the second half grew the peak by ${(second - first).toFixed(1)} MB (< 30): memory does not grow with the log`);
});
