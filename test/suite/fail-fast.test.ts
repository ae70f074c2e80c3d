// A machine missing what the suite needs hears it in seconds: the precheck (tap's `before`) names
// what is missing and the command that gets it, and a test bed whose set-up fails closes what it
// started, so its file fails at once instead of waiting for tap's time-out.
import { spawn } from 'node:child_process';
import t from 'tap';
import { freePort } from '../support/oauth.ts';

interface Run {
  code: number | null;
  output: string;
  ms: number;
  /** still running after `killAfterMs`, so killed */
  killed: boolean;
}

/** Runs a TypeScript file in its own Node process with `env` on top of ours; killed after `killAfterMs`. */
function runScript(file: string, env: Record<string, string>, killAfterMs: number): Promise<Run> {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import=tsx', file], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, killAfterMs);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: Date.now() - started, killed });
    }),
  );
}

t.test('the precheck: PostgreSQL and Redis on a closed port, no Chromium: exits 1 within seconds, one line each with the command that gets it', async (t) => {
  const closed = await freePort();
  const run = await runScript(
    'test/support/precheck.ts',
    {
      TEST_DATABASE_ADMIN_URL: `postgres://postgres@127.0.0.1:${closed}/postgres`,
      REDIS_URL: `redis://127.0.0.1:${closed}`,
      CHROMIUM_PATH: '/nonexistent/chromium',
    },
    20_000,
  );
  t.equal(run.killed, false, `ended by itself, in ${run.ms} ms`);
  t.ok(run.ms < 10_000, `within seconds (${run.ms} ms)`);
  t.equal(run.code, 1);
  const lines = run.output.split('\n').filter((line) => line.startsWith('- '));
  t.equal(lines.length, 3, 'one line per missing piece', { output: run.output });
  t.match(lines[0], new RegExp(`^- PostgreSQL at 127\\.0\\.0\\.1:${closed} .*ECONNREFUSED.*: start it with \`sudo pg_ctlcluster .* main start\``));
  t.match(lines[1], new RegExp(`^- Redis at 127\\.0\\.0\\.1:${closed} .*ECONNREFUSED.*: start it with \`redis-server --daemonize yes`));
  t.match(lines[2], /^- Chromium: no executable at \/nonexistent\/chromium .*install it with `sudo apt-get install -y --no-install-recommends chromium`/);
});

t.test('the precheck on this machine (PostgreSQL, Redis and Chromium there): exits 0, silent', async (t) => {
  const run = await runScript('test/support/precheck.ts', {}, 20_000);
  t.equal(run.code, 0, run.output);
  t.equal(run.output, '');
});

t.test('an OAuth test bed whose Chromium is missing closes the app it started: its test file fails and its process ends within seconds', async (t) => {
  const run = await runScript('test/suite/fixtures/oauth-bed-without-chromium.ts', { CHROMIUM_PATH: '/nonexistent/chromium' }, 60_000);
  t.equal(run.killed, false, `the process ended by itself, in ${run.ms} ms`);
  t.ok(run.ms < 30_000, `within seconds, not at tap's time-out (${run.ms} ms)`);
  t.equal(run.code, 1, 'the test failed');
  t.match(run.output, /not ok 1 - an OAuth test bed on a machine without Chromium/);
  t.match(run.output, /\/nonexistent\/chromium/, 'naming the missing executable');
});
