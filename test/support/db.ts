import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool, type Pool } from '../../infra/db.ts';

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: string;
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

/** A database of its own for one test file, so parallel runs never see each other. */
export async function freshDatabase(prefix = 't', options: { durable?: boolean } = {}): Promise<TestDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`.toLowerCase();
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  // Tests do not need each commit flushed to disk; visibility and ordering are unchanged.
  // Benchmarks ask for durable commits, as in production.
  if (!options.durable) await admin.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const pool = createPool(url.toString(), 8);
  let dropped = false;
  return {
    name,
    url: url.toString(),
    pool,
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end().catch(() => {});
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}
