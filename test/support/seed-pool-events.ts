// Many pool events, fast, for the exports' memory test and bench: one INSERT … SELECT over
// generate_series straight into the events table of a test-only database, in the shape the
// PostgreSQL store reads (pool streams, an AgentFollowed at revision 0, then AllocationAdded
// credits of 0.000001 to 0.001000 USD). The table is made unlogged and loses its (stream, revision)
// constraint, which guards appends and stream reads (the seeded database takes neither): two thirds
// of the seeding's time went to it.
import type { Pool } from '../../infra/db.ts';
import { settings, terms } from '../domain/pool/fixtures.ts';

export const SEEDED_AT = '2026-01-01T00:00:00.000Z';

/** `pools` pools of `perPool` events each; pool k is `seed-user.agent-k.virtual`. */
export async function seedPoolEvents(db: Pool, pools: number, perPool: number): Promise<void> {
  const followed = { ...settings, agentId: 'agent', userId: 'seed-user', walletContext: 'virtual', walletMode: 'VIRTUAL', terms, subscribedAt: SEEDED_AT };
  await db.query('ALTER TABLE events SET UNLOGGED');
  await db.query('ALTER TABLE events DROP CONSTRAINT IF EXISTS events_stream_revision');
  await db.query(
    `INSERT INTO events (stream_name, revision, event_id, event_type, data, metadata)
     SELECT 'pool-seed-user.agent-' || (g / $2) || '.virtual', g % $2, md5(g::text)::uuid,
       CASE WHEN g % $2 = 0 THEN 'AgentFollowed' ELSE 'AllocationAdded' END,
       CASE WHEN g % $2 = 0 THEN $3::jsonb || jsonb_build_object('poolId', 'seed-user.agent-' || (g / $2) || '.virtual', 'agentId', 'agent-' || (g / $2))
         ELSE ('{"transferId":"seed-' || g || '","amountMicro":' || (g % 1000 + 1) || ',"confirmed":true,"at":"' || $4 || '"}')::jsonb END,
       $5::jsonb
     FROM generate_series(0, $1::int - 1) AS g`,
    [pools * perPool, perPool, JSON.stringify(followed), SEEDED_AT, JSON.stringify({ correlationId: 'seed', actor: 'test', occurredAt: SEEDED_AT })],
  );
  await db.query('ANALYZE events');
}
