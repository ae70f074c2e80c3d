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
  return checkpointsByName(rows, names);
}

/** A stored checkpoint's position (pg returns the bigint columns as text); START for none (no row, or a row of a LEFT JOIN that found none). */
export const checkpointOf = (row: { commit_position: string | null; prepare_position: string | null } | undefined): Position =>
  row?.commit_position != null && row.prepare_position != null ? { commit: BigInt(row.commit_position), prepare: BigInt(row.prepare_position) } : START;

/** Each of `names`' checkpoint among `rows` (START for those never written). */
function checkpointsByName(rows: ReadonlyArray<{ name: string; commit_position: string; prepare_position: string }>, names: readonly string[]) {
  const found = new Map(rows.map((r) => [r.name, checkpointOf(r)]));
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

/** A checkpoint row as the simple protocol returns it (text columns). */
type CheckpointRow = { name: string; commit_position: string; prepare_position: string };

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * A projection batch's opening in one round trip: BEGIN, the projectors' advisory locks (in key
 * order, so two runners never deadlock) and their checkpoints. Sent as one simple query: each of its
 * statements takes its own snapshot (READ COMMITTED), so the checkpoints are read after the locks are
 * held, as three round trips read them. Keys are integers and names the projectors' own, as literals.
 */
export async function openBatch(client: PoolClient, keys: readonly number[], names: readonly string[]): Promise<Map<string, Position>> {
  const results = (await client.query(
    `BEGIN; SELECT pg_advisory_xact_lock(k) FROM unnest('{${keys.map((k) => String(Math.trunc(k))).join(',')}}'::int[]) AS k ORDER BY k;
     SELECT name, commit_position, prepare_position FROM projection_checkpoints WHERE name IN (${names.length ? names.map(literal).join(', ') : 'NULL'})`,
  )) as unknown as Array<{ rows: CheckpointRow[] }>;
  return checkpointsByName(results[2]!.rows, names);
}

/** A projection batch's end in one round trip: the checkpoints it reached, then COMMIT. */
export async function closeBatch(client: PoolClient, positions: ReadonlyMap<string, Position>): Promise<void> {
  if (positions.size === 0) {
    await client.query('COMMIT');
    return;
  }
  const values = [...positions].map(([n, p]) => `(${literal(n)}, ${p.commit.toString()}, ${p.prepare.toString()}, now())`);
  await client.query(
    `INSERT INTO projection_checkpoints (name, commit_position, prepare_position, updated_at) VALUES ${values.join(', ')}
     ON CONFLICT (name) DO UPDATE SET commit_position = excluded.commit_position,
       prepare_position = excluded.prepare_position, updated_at = now();
     COMMIT`,
  );
}
