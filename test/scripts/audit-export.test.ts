// npm run audit -- export as a child process against the test app's database: the same bytes as the
// HTTP export of the same pool (one module writes both), the admin exports' files whole (trailer
// count and digest), and usage errors exiting 2, a pool never followed 1.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startTestApp, type TestApp } from '../support/app.ts';
import { poolFlows } from '../support/pool-flows.ts';

function audit(app: TestApp, ...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import=tsx', 'scripts/audit.ts', ...args], {
    env: { ...process.env, DATABASE_URL: app.databaseUrl, LOG_LEVEL: 'silent', EVENT_STORE: app.deps.config.EVENT_STORE },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

/** The trailer's count, once its digest is checked against the bytes before it. */
function trailerCount(bytes: Buffer, format: 'csv' | 'jsonl'): number {
  const text = bytes.toString('utf8');
  const eol = format === 'csv' ? '\r\n' : '\n';
  const start = text.lastIndexOf(eol, text.length - eol.length - 1) + eol.length;
  const last = text.slice(start, -eol.length);
  const trailer =
    format === 'csv'
      ? (([, count, sha256]) => ({ count: Number(count), sha256 }))(/^#trailer count=(\d+) sha256=(\w+)$/.exec(last) ?? [])
      : (JSON.parse(last) as { trailer: { count: number; sha256: string } }).trailer;
  const digest = createHash('sha256').update(text.slice(0, start), 'utf8').digest('hex');
  if (digest !== trailer.sha256) throw new Error('digest mismatch');
  return trailer.count;
}

t.test('npm run audit -- export', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const dir = mkdtempSync(join(tmpdir(), 'audit-export-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { users, spotAgent } = await poolFlows(app, 'export');
  const user = users[0]!;

  await t.test("a pool's ledger: the HTTP export's bytes, by user id or email, CSV and JSONL", async (t) => {
    for (const format of ['csv', 'jsonl'] as const) {
      const out = join(dir, `pool.${format}`);
      const byEmail = join(dir, `pool-by-email.${format}`);
      const [run, again] = await Promise.all([
        audit(app, 'export', '--user', user.userId, '--agent', spotAgent, '--format', format, '--out', out, '--progress'),
        audit(app, 'export', '--user', 'export-user1@example.test', '--agent', spotAgent, '--context', 'virtual', '--format', format, '--out', byEmail),
      ]);
      t.equal(run.status, 0, run.stderr);
      t.equal(again.status, 0, again.stderr);
      t.match(run.stdout, new RegExp(`wrote \\d+ rows to ${out}`));
      t.match(run.stderr, /export \|.*\| \d+\/\d+ events/, 'a progress bar on stderr');
      const res = await fetch(`${app.url}/api/v1/users/me/subscriptions/${spotAgent}/ledger/export?format=${format}`, {
        headers: { authorization: `Bearer ${user.accessToken}` },
      });
      const http = Buffer.from(await res.arrayBuffer());
      t.ok(readFileSync(out).equals(http), `${format}: the same bytes as the route`);
      t.ok(readFileSync(byEmail).equals(http), `${format}: by email too`);
      t.ok(trailerCount(http, format) > 5);
    }
  });

  await t.test('every ledger line and the transfer journal, whole, in a time range', async (t) => {
    const [ledger, transfers, later] = await Promise.all([
      audit(app, 'export', '--all-ledger', '--out', join(dir, 'all.csv')),
      audit(app, 'export', '--transfers', '--format', 'jsonl', '--out', join(dir, 'transfers.jsonl')),
      audit(app, 'export', '--transfers', '--from', '2999-01-01T00:00:00Z', '--out', join(dir, 'none.csv')),
    ]);
    for (const run of [ledger, transfers, later]) t.equal(run.status, 0, run.stderr);
    t.ok(trailerCount(readFileSync(join(dir, 'all.csv')), 'csv') > 20);
    t.ok(trailerCount(readFileSync(join(dir, 'transfers.jsonl')), 'jsonl') > 5);
    t.equal(trailerCount(readFileSync(join(dir, 'none.csv')), 'csv'), 0, 'nothing after 2999, and still a trailer');
  });

  await t.test('usage errors exit 2; a pool never followed exits 1', async (t) => {
    const out = join(dir, 'x.csv');
    const runs = await Promise.all([
      audit(app, 'export', '--out', out),
      audit(app, 'export', '--all-ledger', '--transfers', '--out', out),
      audit(app, 'export', '--user', user.userId, '--out', out),
      audit(app, 'export', '--all-ledger'),
      audit(app, 'export', '--all-ledger', '--format', 'xml', '--out', out),
      audit(app, 'export', '--all-ledger', '--from', 'soon', '--out', out),
      // a date the API would refuse is refused here too (Date.parse alone took a bare year)
      audit(app, 'export', '--all-ledger', '--from', '2025', '--out', out),
      audit(app, 'export', '--all-ledger', '--to', '1 March 2026', '--out', out),
      audit(app, 'export', '--all-ledger', '--from', '2026-02-01T00:00:00Z', '--to', '2026-01-01T00:00:00Z', '--out', out),
      audit(app, 'export', '--user', user.userId, '--agent', spotAgent, '--context', 'paper', '--out', out),
    ]);
    for (const run of runs) {
      t.equal(run.status, 2, run.stderr);
      t.match(run.stderr, /usage: npm run audit -- export/);
    }
    const never = await audit(app, 'export', '--user', user.userId, '--agent', 'no-such-agent', '--out', out);
    t.equal(never.status, 1);
    t.match(never.stderr, /never followed/);
  });
});
