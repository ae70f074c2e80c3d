// A workers process killed with SIGKILL while a developer webhook is in flight (the receiver has
// it and has not answered): nothing was recorded, the agent's head stays leased until the lease
// expires, then a new workers process sends the same event (same id, same bytes) and records one
// attempt. At least once, never lost, and the agent's next event only after it.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { api, startTestApp } from '../support/app.ts';
import { listedFollowableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { startClientMetadataHost } from '../support/oauth.ts';
import { startServiceProcess, type ServiceProcess } from '../support/process.ts';
import { until } from '../support/until.ts';

const TIMEOUT_MS = 2_000; // the lease: 2 × 2 s + 5 s

t.test('SIGKILL mid-delivery: the same event is sent again once the lease expires, and recorded once', async (t) => {
  const host = await startClientMetadataHost();
  const dir = mkdtempSync(join(tmpdir(), 'webhook-ca-'));
  writeFileSync(join(dir, 'ca.pem'), host.ca);
  const held: ServerResponse[] = [];
  const received: Array<{ id: string; type: string; text: string }> = [];
  host.serve('/crash', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({ ...(JSON.parse(text) as { id: string; type: string }), text });
      if (received.length === 1)
        held.push(res); // the first attempt never gets its answer
      else res.writeHead(200).end();
    });
  });
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  const children: ServiceProcess[] = [];
  t.teardown(async () => {
    for (const c of children) await c.stop();
    await app.close();
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const workers = async () => {
    const env = {
      REDIS_PREFIX: `webhookcrash-${app.redisKeyPrefix.replace(/[^A-Za-z0-9]/g, '')}`,
      WEBHOOK_SWEEP_INTERVAL_MS: '100',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      TEST_WEBHOOK_CA: join(dir, 'ca.pem'),
    };
    const child = await startServiceProcess(app, 'workers', env, 'test/support/webhook-worker-process.ts');
    children.push(child);
    return child;
  };
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'crash-dev@example.test');
  const user = await signIn(app, 'crash-user@example.test');
  const agent = await listedFollowableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    { name: 'Crash', venue: 'SPOT_VENUE', webhookUrl: `${host.origin}/crash` },
  );
  t.equal(
    (await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId: agent.agentId, allocationAmountUsd: 100 } })).status,
    200,
  );
  t.equal((await api(app, 'DELETE', `/api/v1/users/me/subscriptions/${agent.agentId}`, { token: user.accessToken })).status, 200);
  const row = async () =>
    (
      await app.deps.pool.query<{ status: string; attempts: number; leased: boolean }>(
        `SELECT status, attempts, lease_until IS NOT NULL AS leased FROM webhook_deliveries WHERE agent_id = $1 ORDER BY seq LIMIT 1`,
        [agent.agentId],
      )
    ).rows[0];

  const first = await workers();
  await until('the first attempt at the receiver', async () => received.length === 1);
  first.child.kill('SIGKILL');
  await first.exited;
  t.same(await row(), { status: 'pending', attempts: 0, leased: true }, 'killed mid-attempt: nothing recorded, the lease held');

  const killedAt = Date.now();
  await workers();
  await until('both events delivered', async () => received.length === 3, 30_000);
  t.ok(Date.now() - killedAt >= 2 * TIMEOUT_MS, 'not sent again before the lease expired');
  t.same(
    received.map((r) => r.type),
    ['follower.joined', 'follower.joined', 'follower.left'],
    'the next event only after it',
  );
  t.equal(received[1]!.text, received[0]!.text, 'the same event: same id, same bytes');
  const list = await until('delivered in the list', async () => {
    const res = await api(app, 'GET', `/api/v1/developers/agents/${agent.agentId}/webhook-deliveries`, { token: dev.accessToken });
    return res.body.data.items.every((i: { status: string }) => i.status === 'delivered') && res.body.data.items;
  });
  t.match(list[1], { type: 'follower.joined', attempts: 1, attemptLog: [{ attempt: 1, statusCode: 200 }] }, 'one attempt recorded: the killed one left none');
  for (const res of held) res.destroy();
});
