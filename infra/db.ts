import pg from 'pg';

// int8 (bigint) columns come back as strings by default; money and positions are parsed by
// the code that reads them, never as JS numbers.
export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export function createPool(connectionString: string, max = 20): pg.Pool {
  const pool = new pg.Pool({ connectionString, max });
  // An idle client that loses its server must not crash the process.
  pool.on('error', () => {});
  return pool;
}

export interface Migration {
  /** unique and stable, e.g. `eventstore/001-events` */
  id: string;
  sql: string;
}

/**
 * Applies migrations not yet recorded, each in its own transaction, under an advisory lock so
 * several processes starting at once apply each exactly once.
 */
export async function migrate(pool: pg.Pool, migrations: Migration[]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(727001)');
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ id: string }>('SELECT id FROM schema_migrations');
    const done = new Set(rows.map((r) => r.id));
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (id) VALUES ($1)', [m.id]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(727001)').catch(() => {});
    client.release();
  }
}

/**
 * Creates the database named in `connectionString` when it does not exist yet, so a first
 * `npm start` needs no manual step. It connects to the server's `postgres` database for that.
 */
export async function ensureDatabase(connectionString: string): Promise<void> {
  const probe = new pg.Client({ connectionString });
  try {
    await probe.connect();
    return;
  } catch (err) {
    if ((err as pg.DatabaseError).code !== '3D000') throw err; // anything but "database does not exist"
  } finally {
    await probe.end().catch(() => {});
  }
  const url = new URL(connectionString);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } catch (err) {
    if ((err as pg.DatabaseError).code !== '42P04') throw err; // another process created it first
  } finally {
    await admin.end();
  }
}

/** Runs `fn` in one transaction on one client. */
export function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inOwnTransaction(pool, async (client) => {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  });
}

/**
 * A transaction `fn` opens and ends itself (so each end can go in one round trip with the statements
 * beside it: the projection batches), on a client of its own; a failure rolls it back.
 */
export async function inOwnTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await fn(client);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
