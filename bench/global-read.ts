// Focused bench of the global-log read (figure (e) of bench/eventstore.ts): fills a log once with
// events shaped like the bench's (many small transactions, real xids), then reads it whole in
// batches of 1,000 with each variant, back to back, several rounds; prints medians.
// It also reports the CPU time per event of this process and of the one PostgreSQL backend.
//   npx tsx bench/global-read.ts [--events 300000] [--rounds 5] [--db URL (reuse, not dropped)] [--only a,b] [--retain]
// --retain first reads the whole log with the first variant and keeps it, as the bench's exactly-once
// run keeps its 300k subscribed events while (e) runs: V8 then pretenures the allocation sites of
// that decoder, and the reads run against a large old generation.
import { createPool, migrate, type Pool } from '../infra/db.ts';
import { createPostgresEventStore } from '../infra/eventstore/postgres.ts';
import { eventStoreMigrations } from '../infra/eventstore/postgres-schema.ts';
import { START, type Position } from '../infra/eventstore/port.ts';
import { freshDatabase } from '../test/support/db.ts';
import { REFERENCE_COLUMNS, referenceEvent, type ReferenceRow } from '../test/support/reference-decoding.ts';
import { processCpuMs } from './cpu.ts';
import { fmt } from './measure.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const EVENTS = Number(arg('events') ?? 300_000);
const ROUNDS = Number(arg('rounds') ?? 5);
const BATCH = 1000;

const SQL = `SELECT ${REFERENCE_COLUMNS} FROM events
  WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
    AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY events.transaction_id, events.position
  LIMIT $3`;

/** Rows of about the bench's shape: 1 to 5 events per transaction, one commit each. */
async function fill(pool: Pool, events: number): Promise<void> {
  await pool.query(`CREATE OR REPLACE PROCEDURE bench_fill(n int) LANGUAGE plpgsql AS $$
    DECLARE k int; done int := 0; s text;
    BEGIN
      WHILE done < n LOOP
        k := least(n - done, CASE WHEN random() < 0.6 THEN 1 ELSE 2 + floor(random() * 4)::int END);
        s := 'w' || floor(random() * 16)::int || '-' || gen_random_uuid();
        INSERT INTO events (stream_name, revision, event_id, event_type, data, metadata)
          SELECT s, g - 1, gen_random_uuid(), 'Written', jsonb_build_object('n', floor(random() * 1000)::int),
                 jsonb_build_object('correlationId', gen_random_uuid(), 'actor', 'system:writers',
                                    'occurredAt', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
          FROM generate_series(1, k) g;
        done := done + k;
        COMMIT;
      END LOOP;
    END $$`);
  await pool.query('SET synchronous_commit = off');
  await pool.query('CALL bench_fill($1)', [events]);
  if (!process.argv.includes('--no-vacuum')) await pool.query('VACUUM ANALYZE events');
}

type Reader = (from: Position, maxCount?: number) => Promise<{ n: number; last: Position | undefined; events?: unknown[] }>;

const variants: Record<string, (pool: Pool) => Reader> = {
  /** the decoding before this change: pg's row objects and default parsers, the text cast of the xid */
  before:
    (pool) =>
    async (from, maxCount = BATCH) => {
      const { rows } = await pool.query<ReferenceRow>({ name: 'before', text: SQL, values: args(from, maxCount) });
      const events = rows.map(referenceEvent);
      return { n: events.length, last: events.at(-1)?.position, events };
    },
  /** the store as it is */
  store: (pool) => {
    const store = createPostgresEventStore({ pool });
    return async (from, maxCount = BATCH) => {
      const batch = await store.readAll({ fromPosition: from, maxCount });
      return { n: batch.length, last: batch.at(-1)?.position, events: batch };
    };
  },
  /** the same statement, rows as arrays of the wire's strings: no parsing at all */
  rawText: (pool) => {
    const noParse = { getTypeParser: () => (v: string) => v };
    return async (from) => {
      const { rows } = await pool.query({ name: 'raw-text', text: SQL, values: args(from), rowMode: 'array', types: noParse as never });
      const last = rows.at(-1) as string[] | undefined;
      return { n: rows.length, last: last && { commit: BigInt(last[1]!), prepare: BigInt(last[0]!) } };
    };
  },
  /** the statement with every column's text output computed on the server, one row out */
  serverOutput: (pool) => {
    const text = `SELECT count(*)::int AS n, (array_agg(tx_text ORDER BY o DESC))[1] AS c, (array_agg(position ORDER BY o DESC))[1] AS p,
        sum(length(concat(position::text, tx_text, stream_name, revision::text, event_id::text, event_type, data::text, metadata::text, created_at::text))) AS bytes
      FROM (SELECT row_number() OVER () AS o, * FROM (${SQL}) q) r`;
    return async (from) => {
      const { rows } = await pool.query({ name: 'server-output', text, values: args(from) });
      const r = rows[0] as { n: number; c: string | null; p: string | null };
      return { n: r.n, last: r.c === null ? undefined : { commit: BigInt(r.c), prepare: BigInt(r.p!) } };
    };
  },
  /** the same scan on the server, one row out: what PostgreSQL takes without output or transfer */
  serverCount: (pool) => {
    const text = `SELECT count(*)::int AS n, (array_agg(tx_text ORDER BY o DESC))[1] AS c, (array_agg(position ORDER BY o DESC))[1] AS p
      FROM (SELECT row_number() OVER () AS o, * FROM (${SQL}) q) r`;
    return async (from) => {
      const { rows } = await pool.query({ name: 'server-count', text, values: args(from) });
      const r = rows[0] as { n: number; c: string | null; p: string | null };
      return { n: r.n, last: r.c === null ? undefined : { commit: BigInt(r.c), prepare: BigInt(r.p!) } };
    };
  },
};

function args(from: Position, maxCount = BATCH): [string, string, number] {
  return [from.commit < 0n ? '0' : from.commit.toString(), from.prepare.toString(), maxCount];
}

let backendPid = 0;

async function readWhole(read: Reader): Promise<{ events: number; ms: number; nodeCpu: number; pgCpu: number }> {
  let from: Position = START;
  let events = 0;
  const c0 = process.cpuUsage();
  const p0 = processCpuMs(backendPid);
  const t0 = performance.now();
  for (;;) {
    const { n, last } = await read(from);
    events += n;
    if (n < BATCH) break;
    from = last!;
  }
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { events, ms, nodeCpu: (c.user + c.system) / 1e6, pgCpu: (processCpuMs(backendPid) - p0) / 1000 };
}

async function readAllKept(read: Reader): Promise<unknown[]> {
  const kept: unknown[] = [];
  let from: Position = START;
  for (;;) {
    const { events = [], last } = await read(from, 5000);
    kept.push(...events);
    if (events.length < 5000) return kept;
    from = last!;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const reuse = arg('db');
const db = reuse ? undefined : await freshDatabase('bench_gread', { durable: true });
const url = reuse ?? db!.url;
try {
  // One connection, so the server's side of every read is one backend whose CPU time /proc shows.
  const pool = createPool(url, 1);
  backendPid = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  if (!reuse || Number((await pool.query("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'events'")).rows[0].n) === 0) {
    await migrate(pool, eventStoreMigrations);
    const t0 = performance.now();
    await fill(pool, EVENTS);
    console.log(`filled ${fmt(EVENTS)} events in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  }
  const only = arg('only')?.split(',');
  const chosen = Object.keys(variants).filter((k) => !only || only.includes(k));
  const readers = Object.fromEntries(chosen.map((k) => [k, variants[k]!(pool)]));
  const retained = process.argv.includes('--retain') ? await readAllKept(readers[chosen[0]!]!) : [];
  for (const k of chosen) await readWhole(readers[k]!); // warm: prepared statements, cache, JIT
  const perSecond: Record<string, number[]> = Object.fromEntries(chosen.map((k) => [k, []]));
  const nodeUs: Record<string, number[]> = Object.fromEntries(chosen.map((k) => [k, []]));
  const pgUs: Record<string, number[]> = Object.fromEntries(chosen.map((k) => [k, []]));
  let total = 0;
  for (let r = 0; r < ROUNDS; r++) {
    // the order rotates each round, so no variant always runs right after the same one
    for (let i = 0; i < chosen.length; i++) {
      const k = chosen[(i + r) % chosen.length]!;
      const { events, ms, nodeCpu, pgCpu } = await readWhole(readers[k]!);
      total = events;
      perSecond[k]!.push(events / (ms / 1000));
      nodeUs[k]!.push((nodeCpu * 1e6) / events);
      pgUs[k]!.push((pgCpu * 1e6) / events);
    }
  }
  console.log(`global read of ${fmt(total)} events in batches of ${BATCH}, ${ROUNDS} rounds: median (min to max); CPU per event, medians`);
  for (const k of chosen) {
    const xs = perSecond[k]!;
    console.log(
      `  ${k.padEnd(14)} ${fmt(median(xs)).padStart(9)} ev/s (${fmt(Math.min(...xs))} to ${fmt(Math.max(...xs))})`.padEnd(58) +
        `node ${fmt(median(nodeUs[k]!), 2)} µs  postgres ${fmt(median(pgUs[k]!), 2)} µs`,
    );
  }
  if (retained.length) console.log(`(while retaining ${fmt(retained.length)} events read before by ${chosen[0]})`);
  await pool.end();
} finally {
  await db?.drop();
}
