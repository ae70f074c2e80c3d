// The README's curl walk-through, run as written, twice in a row, against `npm start` as the README
// starts it (ADMIN_EMAILS set, no SMTP server: login codes are read from the service's log). Only
// the files it keeps in /tmp (the log, its tokens, the lookup's error) are moved to a directory of
// this test's own, and the service gets a database and a Redis prefix of its own.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { freshDatabase } from '../support/db.ts';

const README = await readFile(join(process.cwd(), 'README.md'), 'utf8');

/** The walk-through's script: the shell block under "Walk-through with curl" that runs `bash <<'WALK'`. */
function walkThrough(dir: string): string {
  const section = README.slice(README.indexOf('## Walk-through with curl'));
  const block = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes("<<'WALK'"));
  if (!block) throw new Error('the README has no walk-through block');
  return block
    .replaceAll('/tmp/app.log', join(dir, 'app.log'))
    .replaceAll('/tmp/walkthrough-tokens', join(dir, 'tokens'))
    .replaceAll('/tmp/lookup.err', join(dir, 'lookup.err'));
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('close', (code) => resolve({ code, out }));
  });
}

const dir = await mkdtemp(join(tmpdir(), 'walkthrough-'));
const db = await freshDatabase('walk');
await db.pool.end();
const prefix = `walk-${randomBytes(4).toString('hex')}`;
const port = await freePort();
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  ADMIN_EMAILS: 'admin@example.com',
  PORT: String(port),
  DATABASE_URL: db.url,
  REDIS_PREFIX: prefix,
};

// `npm start 2>&1 | tee <log>`: the service's output, both streams, into the log the script reads.
const log = createWriteStream(join(dir, 'app.log'));
const service: ChildProcess = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
service.stdout!.pipe(log);
service.stderr!.pipe(log);
t.teardown(async () => {
  try {
    process.kill(-service.pid!, 'SIGTERM');
  } catch {
    // already gone
  }
  await new Promise((resolve) => (service.exitCode !== null ? resolve(null) : service.once('close', resolve)));
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  for (let cursor = '0'; ; ) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    if ((cursor = next) === '0') break;
  }
  redis.disconnect();
  await db.drop();
  await rm(dir, { recursive: true, force: true });
});

const deadline = Date.now() + 60_000;
for (;;) {
  const up = await fetch(`http://127.0.0.1:${port}/api`).then(
    (r) => r.ok,
    () => false,
  );
  if (up) break;
  if (Date.now() > deadline || service.exitCode !== null) throw new Error(`the service did not start:\n${await readFile(join(dir, 'app.log'), 'utf8')}`);
  await new Promise((r) => setTimeout(r, 250));
}

for (const round of ['first', 'second']) {
  t.test(`the walk-through runs as written, ${round} time`, async (t) => {
    const { code, out } = await run('bash', ['-c', walkThrough(dir)], env);
    t.equal(code, 0, `the script finished without an error${code === 0 ? '' : `:\n${out}`}`);
    if (process.env.WALK_PRINT) console.error(out);
    t.match(out, /signed GET: 200/, 'the signed API-key request is served');
    t.match(out, /the same signature again: 401 INVALID_SIGNATURE/, 'a replayed signature is refused');
    t.match(out, /^"beta"$/m, 'the agent was approved into beta');
    t.match(out, /"outcome": "executed"/, "the agent's signal traded in the pool");
    t.match(out, /"closeReason": "USER"/, 'the user closed the trade');
    t.match(out, /Stopped following; [\d.]+ USD returned to the wallet/, 'stopping returned the capital');
  });
}
