// The event reads decode rows by hand (array rows, per-query type parsers, a fast timestamptz
// path). These tests hold them to the decoding they replaced: pg's row objects with its default
// parsers, the transaction id cast to text, and the same RecordedEvent built from them.
import { deepStrictEqual } from 'node:assert/strict';
import t from 'tap';
import pg from 'pg';
import { createPool, migrate, type Pool } from '../../../infra/db.ts';
import { createPostgresEventStore } from '../../../infra/eventstore/postgres.ts';
import { parseTimestamptz } from '../../../infra/eventstore/postgres-reads.ts';
import { eventStoreMigrations } from '../../../infra/eventstore/postgres-schema.ts';
import type { RecordedEvent } from '../../../infra/eventstore/port.ts';
import { freshDatabase } from '../../support/db.ts';
import { REFERENCE_COLUMNS, referenceEvent, type ReferenceRow } from '../../support/reference-decoding.ts';

const pgParser = pg.types.getTypeParser(1184) as (s: string) => unknown;
/** node's deepStrictEqual (same prototypes, bigint for bigint, Date for Date), tap's diff when not */
function strictlyEqual(t: Tap, actual: unknown, expected: unknown, message: string) {
  try {
    deepStrictEqual(actual, expected);
    t.pass(message);
  } catch {
    t.strictSame(actual, expected, message);
  }
}
type Tap = Parameters<Parameters<typeof t.test>[0]>[0];

const same = (a: unknown, b: unknown) => (a instanceof Date && b instanceof Date ? Object.is(a.getTime(), b.getTime()) : Object.is(a, b));

/** The decoding before array rows: pg's defaults, then the fields converted one by one. */
async function referenceRead(pool: Pool, where = 'true'): Promise<RecordedEvent[]> {
  const { rows } = await pool.query<ReferenceRow>(`SELECT ${REFERENCE_COLUMNS} FROM events WHERE ${where} ORDER BY transaction_id, position`);
  return rows.map(referenceEvent);
}

const tricky: unknown[] = [
  { text: 'héllo wörld ✓ 日本語 עברית مرحبا 👩‍👩‍👧‍👦 e\u0301 \u2028\u2029 "quoted" back\\slash \u0001\u001f tab\t nl\n' },
  { '': 'empty key', 'ключ 🔑': ['unicode key'], 'a.b': { 'c/d': null } },
  // biome-ignore lint/correctness/noPrecisionLoss: numbers past a double's precision, on purpose
  { big: 12345678901234567890, bigger: 1.7976931348623157e308, tiny: 5e-324, neg: -0, tenth: 0.1, int: 9007199254740993, exp: 1e21 },
  { nested: { a: [1, [2, [3, [4, { deep: [true, false, null, '', {}, []] }]]]] } },
  [1, 'two', { three: 3 }],
  'a bare string',
  42.5,
  null,
  {},
];

t.test('parseTimestamptz gives what pg parses, for every shape PostgreSQL writes', async (t) => {
  const db = await freshDatabase('decode_ts');
  t.teardown(() => db.drop());
  const values = [
    'now()',
    "'2026-11-23 09:37:28.292346+00'",
    "'2026-11-23 09:37:28.2+00'",
    "'2026-11-23 09:37:28.29+00'",
    "'2026-11-23 09:37:28.292+00'",
    "'2026-11-23 09:37:28.2923+00'",
    "'2026-11-23 09:37:28.29234+00'",
    "'2026-11-23 09:37:28+00'",
    "'2024-02-29 23:59:59.999999+00'",
    "'1900-01-01 00:00:00+00'",
    "'1850-06-01 12:00:00.5+00'",
    "'0100-01-01 00:00:00+00'",
    "'0099-12-31 23:59:59.999+00'",
    "'0001-01-01 00:00:00+00'",
    "'0001-12-31 12:00:00+00 BC'",
    "'4713-01-01 00:00:00+00 BC'",
    "'9999-12-31 23:59:59.999999+00'",
    "'10000-01-01 00:00:00+00'",
    "'294276-12-31 23:59:59.999999+00'",
    "'infinity'",
    "'-infinity'",
  ];
  const random = `SELECT '1900-01-01'::timestamptz + random() * interval '200 years' FROM generate_series(1, 2000)`;
  let compared = 0;
  for (const zone of ['UTC', 'Asia/Kathmandu', 'America/St_Johns', 'Europe/Amsterdam', 'Africa/Monrovia', 'Pacific/Kiritimati', 'America/Los_Angeles']) {
    for (const style of ['ISO, MDY', 'SQL, DMY', 'Postgres, MDY', 'German']) {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      await client.query(`SET TimeZone = '${zone}'`);
      await client.query(`SET DateStyle = '${style}'`);
      const texts = [
        ...(
          await client.query({
            text: `SELECT ${values.map((v) => `(${v})::timestamptz`).join(', ')}`,
            rowMode: 'array',
            types: { getTypeParser: () => (v: string) => v },
          })
        ).rows[0],
        ...(await client.query({ text: random, rowMode: 'array', types: { getTypeParser: () => (v: string) => v } })).rows.map((r) => r[0]),
      ] as string[];
      await client.end();
      const wrong = texts.filter((s) => !same(parseTimestamptz(s), pgParser(s)));
      t.same(wrong, [], `${zone}, ${style}: ${texts.length} values, e.g. ${texts[1]}, ${texts[11]}, ${texts[14]}`);
      compared += texts.length;
    }
  }
  const odd = [
    '',
    'garbage',
    '2026-11-23T09:00:00Z',
    '2026-11-23 09:00:00Z',
    '2026-11-23 09:00:00.1234567+00',
    '2026-1x-23 09:00:00+00',
    '2026-11-23 09:00:00+0',
    '2026-11-23 09:00:00+05:3',
    '2026-11-23 09:00:00.+00',
    '2026-11-23 09:00:00 +00',
  ];
  for (const s of odd) t.ok(same(parseTimestamptz(s), pgParser(s)), `not PostgreSQL's output, still as pg parses it: ${JSON.stringify(s)}`);
  t.comment(`${compared} timestamps compared`);
});

t.test('every event read returns what the former decoding returned, field for field', async (t) => {
  const db = await freshDatabase('decode_rows');
  t.teardown(() => db.drop());
  await migrate(db.pool, eventStoreMigrations);
  // An odd session time zone: created_at arrives with a +05:45 offset.
  const url = new URL(db.url);
  url.searchParams.set('options', '-c TimeZone=Asia/Kathmandu');
  const pool = createPool(url.toString(), 4);
  t.teardown(() => pool.end());
  const store = createPostgresEventStore({ pool });
  t.teardown(() => store.close());

  const meta = { correlationId: 'c-ü', actor: 'system:decoding', occurredAt: new Date(0).toISOString(), extra: { nested: ['✓'] } };
  await store.append(
    'tricky-1',
    tricky.map((data, i) => ({ type: `Tricky.v${i}`, data, metadata: meta })),
    { expectedRevision: 'no_stream' },
  );
  await store.append('tricky-2 ✓', [{ type: 'Ünïcode type', data: tricky[0], metadata: { ...meta, correlationId: '👩‍👩‍👧‍👦' } }], {
    expectedRevision: 'no_stream',
  });
  // Rows only a hand-written insert makes: created_at at the edges, transaction ids across powers of ten.
  await pool.query(`INSERT INTO events (transaction_id, stream_name, revision, event_id, event_type, data, metadata, created_at) VALUES
    ('9', 'edge', 0, gen_random_uuid(), 'Edge', '{"n": 99999999999999999999999}', '{}', 'infinity'),
    ('10', 'edge', 1, gen_random_uuid(), 'Edge', '[]', '{}', '-infinity'),
    ('99', 'edge', 2, gen_random_uuid(), 'Edge', '"s"', '{}', '0044-03-15 12:00:00+00 BC'),
    ('100', 'edge', 3, gen_random_uuid(), 'Edge', '0', '{}', '0050-01-01 00:00:00.123456+00'),
    ('101', 'edge', 4, gen_random_uuid(), 'Edge', 'null', '{}', '12000-06-01 00:00:00.5+00'),
    ('102', 'edge', 5, gen_random_uuid(), 'Edge', '{}', '{}', '1850-06-01 12:00:00.000001+00')`);

  const expected = await referenceRead(pool);
  t.equal(expected.length, tricky.length + 1 + 6);
  // Other test files' open transactions (any database) hold back the snapshot's xmin, and with
  // it what readAll may return: wait until all of these rows are visible to it.
  const deadline = Date.now() + 30_000;
  while ((await store.readAll({ maxCount: 1000 })).length < expected.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

  for (const maxCount of [1, 4, 1000]) {
    const read: RecordedEvent[] = [];
    for (let from: RecordedEvent['position'] | undefined; ; ) {
      const batch = await store.readAll({ fromPosition: from, maxCount });
      read.push(...batch);
      if (batch.length < maxCount) break;
      from = batch.at(-1)!.position;
    }
    strictlyEqual(t, read, expected, `readAll in batches of ${maxCount}`);
  }
  for (const stream of ['tricky-1', 'tricky-2 ✓', 'edge']) {
    const want = expected.filter((e) => e.streamName === stream);
    t.ok(want.length > 0, `${stream} has events`);
    const [whole, bounded, backwards] = await Promise.all([
      store.readStream(stream),
      store.readStream(stream, { maxCount: 100 }),
      store.readStream(stream, { direction: 'backwards' }),
    ]);
    strictlyEqual(t, whole, want, `readStream ${stream} (coalesced read)`);
    strictlyEqual(t, bounded, want, `readStream ${stream}, maxCount`);
    strictlyEqual(t, backwards, [...want].reverse(), `readStream ${stream}, backwards`);
  }

  // The facts: the same decoding of the columns they keep; `occurredAt` read out of the metadata.
  const factOf = (e: RecordedEvent) => ({
    streamName: e.streamName,
    position: e.position,
    type: e.type,
    data: e.data,
    metadata: { occurredAt: e.metadata.occurredAt },
  });
  for (const [streamPrefix, want] of [
    [undefined, expected],
    ['tricky-', expected.filter((e) => e.streamName.startsWith('tricky-'))],
  ] as const) {
    const facts = await store.readAllFacts({ maxCount: 1000, streamPrefix });
    strictlyEqual(t, facts, want.map(factOf), `readAllFacts${streamPrefix ? ` of ${streamPrefix}` : ''}`);
  }

  const [first] = await store.readStream('tricky-1');
  t.equal(Object.getPrototypeOf(first), Object.prototype, 'a plain object');
  t.equal(Object.getPrototypeOf(first!.position), Object.prototype, 'a plain position');
  t.same(Object.keys(first!), ['id', 'streamName', 'revision', 'position', 'type', 'data', 'metadata', 'createdAt'], 'fields in the same order');
  t.same({ ...first }, first, 'spreads like a literal');
  t.equal(JSON.stringify({ ...first, revision: 0, position: 0 }), JSON.stringify({ ...expected.find((e) => e.id === first!.id), revision: 0, position: 0 }));
});
