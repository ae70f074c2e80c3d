import type { Pool } from '../../infra/db.ts';
import type { Projector } from '../../projections/projector.ts';

/**
 * A read model for runner tests: per stream, how many events were applied and the sum of their
 * `n`. Applying an event twice, or skipping one, changes the figures.
 */
export const statsProjector: Projector = {
  name: 'test-stream-stats',
  tables: ['stream_stats'],
  migrations: [
    {
      id: 'test/stream-stats',
      sql: `CREATE TABLE stream_stats (
        stream_name text PRIMARY KEY, events bigint NOT NULL, total bigint NOT NULL, last_revision bigint NOT NULL)`,
    },
  ],
  async apply(client, event) {
    const n = (event.data as { n?: number }).n ?? 0;
    await client.query(
      `INSERT INTO stream_stats (stream_name, events, total, last_revision) VALUES ($1, 1, $2, $3)
       ON CONFLICT (stream_name) DO UPDATE SET events = stream_stats.events + 1, total = stream_stats.total + $2,
         last_revision = $3`,
      [event.streamName, n, event.revision.toString()],
    );
  },
  async applyBatch(client, events) {
    const byStream = new Map<string, { events: number; total: number; last: bigint }>();
    for (const e of events) {
      const row = byStream.get(e.streamName) ?? { events: 0, total: 0, last: -1n };
      row.events += 1;
      row.total += (e.data as { n?: number }).n ?? 0;
      row.last = e.revision;
      byStream.set(e.streamName, row);
    }
    const rows = [...byStream.entries()];
    await client.query(
      `INSERT INTO stream_stats (stream_name, events, total, last_revision)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[])
       ON CONFLICT (stream_name) DO UPDATE SET events = stream_stats.events + excluded.events,
         total = stream_stats.total + excluded.total, last_revision = excluded.last_revision`,
      [rows.map(([k]) => k), rows.map(([, r]) => r.events), rows.map(([, r]) => r.total), rows.map(([, r]) => r.last.toString())],
    );
  },
};

export async function statsSnapshot(pool: Pool): Promise<Array<Record<string, string>>> {
  const { rows } = await pool.query('SELECT stream_name, events::text, total::text, last_revision::text FROM stream_stats ORDER BY stream_name');
  return rows;
}
