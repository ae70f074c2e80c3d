// The service's whole schema, migrated once into a template database that test apps' databases are
// copied from (CREATE DATABASE … TEMPLATE), instead of running every migration again for each test
// file: a copy takes a fraction of the time, on a PostgreSQL the whole suite shares.
//
// The template is named after a hash of the migrations it holds, so a changed migration makes a new
// one; it is built under another name and renamed when complete, so a copy never sees it half-built;
// it accepts no connections (a template must have none while it is copied). The service still runs
// its migrations at start on the copy (finding them applied), and a migration that fails, fails the
// template's build, so every migration still runs on an empty database. Templates no test file has
// copied for a day are dropped when a new one is built (a template's comment says when it was last
// copied).
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool } from '../../infra/db.ts';
import { allProjectors } from '../../projections/index.ts';
import { migrateAll, schemaMigrations } from '../../projections/migrations.ts';
import { ADMIN_URL, databaseUrl, markTemplateUsed } from './db.ts';

const PREFIX = 'tpl_schema_';
const STALE_MS = 24 * 3600_000;
const building = new Map<string, Promise<string>>();

/** The name of the template database holding the schema of a service on `eventStore`, built when missing. */
export function schemaTemplate(eventStore: 'postgres' | 'esdb'): Promise<string> {
  const migrations = schemaMigrations({ EVENT_STORE: eventStore }, allProjectors);
  const hash = createHash('sha256')
    .update(JSON.stringify(migrations.map((m) => [m.id, m.sql])))
    .digest('hex')
    .slice(0, 16);
  const name = `${PREFIX}${eventStore}_${hash}`;
  let template = building.get(name);
  if (!template) {
    template = ensureTemplate(name, eventStore);
    building.set(name, template);
    template.catch(() => building.delete(name));
  }
  return template;
}

/** Forgets that `name` was built (it went away): the next schemaTemplate builds it again. */
export function forgetSchemaTemplate(name: string): void {
  building.delete(name);
}

async function ensureTemplate(name: string, eventStore: 'postgres' | 'esdb'): Promise<string> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount) return name;
    const draft = `${name}_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE "${draft}"`);
    try {
      await markTemplateUsed(admin, draft);
      const pool = createPool(databaseUrl(draft), 2);
      try {
        await migrateAll(pool, { EVENT_STORE: eventStore }, allProjectors);
      } finally {
        await pool.end();
      }
      await admin.query(`ALTER DATABASE "${draft}" WITH ALLOW_CONNECTIONS false`);
      await admin.query(`ALTER DATABASE "${draft}" RENAME TO "${name}"`);
    } catch (err) {
      await admin.query(`DROP DATABASE IF EXISTS "${draft}" WITH (FORCE)`);
      // another test file built it meanwhile
      if ((err as pg.DatabaseError).code === '42P04') return name;
      throw err;
    }
    await dropStaleTemplates(admin, name);
    return name;
  } finally {
    await admin.end();
  }
}

async function dropStaleTemplates(admin: pg.Client, keep: string): Promise<void> {
  const { rows } = await admin.query<{ datname: string; used: string | null }>(
    `SELECT datname, shobj_description(oid, 'pg_database') AS used FROM pg_database WHERE starts_with(datname, $1) AND datname <> $2`,
    [PREFIX, keep],
  );
  for (const { datname, used } of rows) {
    // templates unused for a day, and drafts of a build that died; one being copied now refuses to go
    if (!(Date.parse(used ?? '') > Date.now() - STALE_MS)) await admin.query(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => {});
  }
}
