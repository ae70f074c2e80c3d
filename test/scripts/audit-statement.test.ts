// npm run audit -- statement (scripts/audit-statement.ts) as a child process against the test app's
// database: the statement it prints is the one the API answers at the same instant (same figures, same
// signature: both derive the development key from the same JWT_SECRET), and --verify exits 0 on a
// statement saved from the API and 1 on one with a figure changed.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { api, startTestApp, type TestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';

function audit(app: TestApp, ...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import=tsx', 'scripts/audit.ts', ...args], {
    env: { ...process.env, DATABASE_URL: app.databaseUrl, LOG_LEVEL: 'silent', EVENT_STORE: 'postgres' },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

t.test('npm run audit -- statement: the API’s statement, and --verify', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const dir = mkdtempSync(join(tmpdir(), 'audit-statement-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'cli-statement-dev@example.test');
  const user = await signIn(app, 'cli-statement-user@example.test');
  const agentId = await followableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    { name: 'Audited', venue: 'SPOT_VENUE' },
    { live: true },
  );
  const follow = await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId, allocationAmountUsd: 42 } });
  t.equal(follow.status, 200);
  await sleep(5);
  const at = new Date().toISOString();

  const fromApi = await api(app, 'GET', `/api/v1/users/me/subscriptions/${agentId}/statement?at=${encodeURIComponent(at)}`, { token: user.accessToken });
  t.equal(fromApi.status, 200);
  const run = await audit(app, 'statement', '--user', 'cli-statement-user@example.test', '--agent', agentId, '--wallet-context', 'virtual', '--at', at);
  t.equal(run.status, 0, run.stderr);
  const printed = JSON.parse(run.stdout);
  t.same(printed, fromApi.body.data, 'the same statement and signature as the API');
  t.equal(printed.statement.pools[0].subscription.allocatedUsd, 42);

  const saved = join(dir, 'envelope.json');
  writeFileSync(saved, JSON.stringify(fromApi.body));
  const verified = await audit(app, 'statement', '--verify', saved);
  t.equal(verified.status, 0, verified.stdout + verified.stderr);
  t.match(verified.stdout, /^verified .*: signed by dev-/);

  // an auditor without the service's keys: the published JWKS only, saved to a file or fetched from the service
  const jwksFile = join(dir, 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify((await api(app, 'GET', '/.well-known/jwks.json')).body));
  for (const source of [jwksFile, `${app.url}/.well-known/jwks.json`]) {
    const byJwks = await audit(app, 'statement', '--verify', saved, '--jwks', source);
    t.equal(byJwks.status, 0, byJwks.stdout + byJwks.stderr);
    t.match(byJwks.stdout, /^verified .*: signed by dev-/);
  }
  const otherKeys = join(dir, 'other-jwks.json');
  const other = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  writeFileSync(otherKeys, JSON.stringify({ keys: [{ ...other, kid: printed.signature.kid, alg: 'EdDSA' }] }));
  t.equal((await audit(app, 'statement', '--verify', saved, '--jwks', otherKeys)).status, 1, 'another key under the same kid does not verify');
  const wrongDigest = join(dir, 'wrong-digest.json');
  writeFileSync(wrongDigest, JSON.stringify({ ...printed, signature: { ...printed.signature, digest: '0'.repeat(64) } }));
  const digestRefused = await audit(app, 'statement', '--verify', wrongDigest);
  t.equal(digestRefused.status, 1);
  t.match(digestRefused.stdout, /digest/);

  const tampered = join(dir, 'tampered.json');
  printed.statement.pools[0].subscription.allocatedUsd = 43;
  writeFileSync(tampered, JSON.stringify(printed));
  const refused = await audit(app, 'statement', '--verify', tampered);
  t.equal(refused.status, 1);
  t.match(refused.stdout, /^NOT VERIFIED/);

  const none = await audit(app, 'statement', '--user', user.userId, '--agent', 'no-such-agent', '--at', at);
  t.equal(none.status, 1);
  t.match(none.stderr, /SUBSCRIPTION_NOT_FOUND/);
  t.equal((await audit(app, 'statement', '--user', user.userId)).status, 2, 'no --at: a usage error');
  t.equal((await audit(app, 'statement', '--user', user.userId, '--at', 'yesterday')).status, 2, 'a bad --at');
});
