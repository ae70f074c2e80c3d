import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool, type Pool } from '../../infra/db.ts';

export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The URL of the database `name` on the test server. */
export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Records that a test file copies `name` now (a template's comment holds when it was last copied, to the hour). */
export async function markTemplateUsed(admin: pg.Client, name: string): Promise<void> {
  const { rows } = await admin.query<{ used: string | null }>(`SELECT shobj_description(oid, 'pg_database') AS used FROM pg_database WHERE datname = $1`, [
    name,
  ]);
  const usedAt = Date.parse(rows[0]?.used ?? '');
  if (usedAt > Date.now() - 3600_000) return;
  // two files may record it at once: one of them is enough
  await admin.query(`COMMENT ON DATABASE "${name}" IS '${new Date().toISOString()}'`).catch(() => {});
}

export interface TestDatabase {
  name: string;
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

/**
 * A database of its own for one test file, so parallel runs never see each other: empty, or a copy
 * of the template database `template` (test/support/schema-template.ts).
 */
export async function freshDatabase(prefix = 't', options: { durable?: boolean; template?: string } = {}): Promise<TestDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`.toLowerCase();
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  if (options.template) {
    await markTemplateUsed(admin, options.template);
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${options.template}"`);
  } else await admin.query(`CREATE DATABASE "${name}"`);
  // Tests do not need each commit flushed to disk; visibility and ordering are unchanged.
  // Benchmarks ask for durable commits, as in production.
  if (!options.durable) await admin.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`);
  await admin.end();
  const url = databaseUrl(name);
  const pool = createPool(url, 8);
  let dropped = false;
  return {
    name,
    url,
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
