import type { Migration, Pool, PoolClient } from '../infra/db.ts';
import { START, type Position } from '../infra/eventstore/port.ts';

export const checkpointMigrations: Migration[] = [
  {
    id: 'projections/000-checkpoints',
    sql: `CREATE TABLE projection_checkpoints (
      name text PRIMARY KEY,
      commit_position bigint NOT NULL,
      prepare_position bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now())`,
  },
];

/** A stable advisory lock key per projector, so one batch at a time applies across processes. */
export function lockKey(name: string): number {
  let h = 0x811c9dc5;
  for (const ch of `projector:${name}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  return h | 0;
}

export async function readCheckpoint(db: Pool | PoolClient, name: string): Promise<Position> {
  return (await readCheckpoints(db, [name])).get(name)!;
}

/** Checkpoints of several projectors in one round trip (START for those never written). */
export async function readCheckpoints(db: Pool | PoolClient, names: string[]): Promise<Map<string, Position>> {
  const { rows } = await db.query<{ name: string; commit_position: string; prepare_position: string }>(
    'SELECT name, commit_position, prepare_position FROM projection_checkpoints WHERE name = ANY($1::text[])',
    [names],
  );
  const found = new Map(rows.map((r) => [r.name, { commit: BigInt(r.commit_position), prepare: BigInt(r.prepare_position) }]));
  return new Map(names.map((n) => [n, found.get(n) ?? START]));
}

export async function writeCheckpoints(client: PoolClient, positions: ReadonlyMap<string, Position>): Promise<void> {
  if (positions.size === 0) return;
  const entries = [...positions.entries()];
  await client.query(
    `INSERT INTO projection_checkpoints (name, commit_position, prepare_position, updated_at)
     SELECT n, c, p, now() FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS x(n, c, p)
     ON CONFLICT (name) DO UPDATE SET commit_position = excluded.commit_position,
       prepare_position = excluded.prepare_position, updated_at = now()`,
    [entries.map(([n]) => n), entries.map(([, p]) => p.commit.toString()), entries.map(([, p]) => p.prepare.toString())],
  );
}
