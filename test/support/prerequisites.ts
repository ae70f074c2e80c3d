// What the test suite needs outside Node: PostgreSQL, Redis and Chromium. Checked before any test
// file starts (test/support/precheck.ts, tap's `before`), so a machine without one of them hears it
// in seconds, with the command that starts or installs it, instead of from test files timing out.
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { Redis, ReplyError } from 'ioredis';
import pg from 'pg';
import { ADMIN_URL } from './db.ts';

/** The Chromium the consent page's browser tests drive (Debian's `chromium`, as `.ci/run` installs it). */
export const chromiumPath = (env: NodeJS.ProcessEnv = process.env) => env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The Redis the test apps use. */
export const testRedisUrl = (env: NodeJS.ProcessEnv = process.env) => env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const CHECK_TIMEOUT_MS = 3_000;
const reasonOf = (err: unknown) => (err instanceof Error && err.message ? err.message : String(err));
const hostOf = (url: string) => {
  const { hostname, port } = new URL(url);
  return `${hostname}:${port}`;
};

async function postgresProblem(adminUrl: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: CHECK_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    const where = `PostgreSQL at ${hostOf(adminUrl)} (${reasonOf(err)})`;
    // The server itself refused (a SQLSTATE: authentication, no such database) or nothing answered as one.
    const answered = /^[0-9A-Z]{5}$/.test(String((err as { code?: unknown }).code));
    if (!answered) {
      return `${where}: start it with \`sudo pg_ctlcluster $(ls /etc/postgresql) main start\` (install: \`sudo apt-get install -y postgresql\`), or set TEST_DATABASE_ADMIN_URL`;
    }
    return `${where}: set TEST_DATABASE_ADMIN_URL to a user that may create databases, e.g. postgres://postgres:PASSWORD@127.0.0.1:5432/postgres`;
  } finally {
    await client.end().catch(() => {});
  }
}

async function redisProblem(url: string): Promise<string | null> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CHECK_TIMEOUT_MS,
    commandTimeout: CHECK_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  let connectionError: unknown; // the socket's own error: the rejection only says the connection closed
  redis.on('error', (err) => (connectionError ??= err));
  try {
    await redis.connect();
    await redis.ping();
    return null;
  } catch (err) {
    const where = `Redis at ${hostOf(url)} (${reasonOf(connectionError ?? err)})`;
    if (!(err instanceof ReplyError)) {
      return `${where}: start it with \`redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no\` (install: \`sudo apt-get install -y redis-server\`), or set REDIS_URL`;
    }
    return `${where}: set REDIS_URL to a Redis the tests may write to`;
  } finally {
    redis.disconnect();
  }
}

async function chromiumProblem(path: string): Promise<string | null> {
  try {
    await access(path, constants.X_OK);
    return null;
  } catch {
    return `Chromium: no executable at ${path} (the OAuth consent page's browser tests): install it with \`sudo apt-get install -y --no-install-recommends chromium\`, or set CHROMIUM_PATH to a Chromium or Chrome executable`;
  }
}

/** One line per missing piece, naming the command that starts or installs it; empty when all are there. */
export async function missingPrerequisites(env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const problems = await Promise.all([
    postgresProblem(env.TEST_DATABASE_ADMIN_URL ?? ADMIN_URL),
    redisProblem(testRedisUrl(env)),
    chromiumProblem(chromiumPath(env)),
  ]);
  return problems.filter((p): p is string => p !== null);
}
