// A workers process killed with SIGKILL while a developer webhook is in flight (the receiver has
// it and has not answered): nothing was recorded, the agent's head stays leased until the lease
// expires, then a new workers process sends the same event (same id, same bytes) and records one
// attempt. At least once, never lost, and the agent's later events only after it, in order.
// Robust under the whole suite's load: every wait is on state the test can see (requests at the
// receiver, the outbox's rows), bounded generously, and every child process is SIGKILLed at teardown.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { api } from '../support/app.ts';
import { listedFollowableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { startServiceProcess, type ServiceProcess } from '../support/process.ts';
import { until } from '../support/until.ts';
import { QUICK_WEBHOOK_RETRIES, webhookTestApp } from '../support/webhooks.ts';

const TIMEOUT_MS = 2_000; // the lease: 2 × 2 s + 5 s

t.test('SIGKILL mid-delivery: the same event is sent again once the lease expires, and recorded once', async (t) => {
  const { app, host, developer: dev, tokens } = await webhookTestApp(t, 'crash-dev@example.test', { workers: 'child' });
  const dir = mkdtempSync(join(tmpdir(), 'webhook-ca-'));
  writeFileSync(join(dir, 'ca.pem'), host.ca);
  const held: ServerResponse[] = [];
  const received: Array<{ id: string; type: string; text: string; at: number }> = [];
  host.serve('/crash', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({ ...(JSON.parse(text) as { id: string; type: string }), text, at: Date.now() });
      if (received.length === 1)
        held.push(res); // the first attempt never gets its answer
      else res.writeHead(200).end();
    });
  });
  const children: ServiceProcess[] = [];
  // tap runs teardowns last in, first out: the children are killed before the bed closes the app and the receiver
  t.teardown(async () => {
    for (const res of held) res.destroy();
    for (const c of children) {
      c.child.kill('SIGKILL'); // no graceful stop: it could wait on a held request
      await c.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const workers = async () => {
    const env = {
      REDIS_PREFIX: `webhookcrash-${app.redisKeyPrefix.replace(/[^A-Za-z0-9]/g, '')}`,
      ...QUICK_WEBHOOK_RETRIES,
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      TEST_WEBHOOK_CA: join(dir, 'ca.pem'),
    };
    const child = await startServiceProcess(app, 'workers', env, 'test/support/webhook-worker-process.ts');
    children.push(child);
    return child;
  };
  const user = await signIn(app, 'crash-user@example.test');
  const agent = await listedFollowableAgent(app, tokens, { name: 'Crash', venue: 'SPOT_VENUE', webhookUrl: `${host.origin}/crash` });
  t.equal(
    (await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId: agent.agentId, allocationAmountUsd: 100 } })).status,
    200,
  );
  t.equal((await api(app, 'DELETE', `/api/v1/users/me/subscriptions/${agent.agentId}`, { token: user.accessToken })).status, 200);
  t.equal(
    (await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId: agent.agentId, allocationAmountUsd: 50 } })).status,
    200,
  );
  const rows = async () =>
    (
      await app.deps.pool.query<{ type: string; status: string; attempts: number; lease_until: Date | null }>(
        'SELECT type, status, attempts, lease_until FROM webhook_deliveries WHERE agent_id = $1 ORDER BY seq',
        [agent.agentId],
      )
    ).rows;
  await until('three events in the outbox', async () => (await rows()).length === 3, 60_000);

  const first = await workers();
  await until('the first attempt at the receiver', async () => received.length === 1, 60_000);
  first.child.kill('SIGKILL');
  await first.exited;
  const [head, ...later] = await rows();
  t.match(head, { type: 'follower.joined', status: 'pending', attempts: 0, lease_until: Date }, 'killed mid-attempt: nothing recorded, the lease held');
  t.match(later, [
    { type: 'follower.left', status: 'pending', attempts: 0 },
    { type: 'follower.joined', status: 'pending', attempts: 0 },
  ]);

  await workers();
  await until('every event delivered', async () => received.length >= 4, 90_000);
  t.ok(received[1]!.at >= head!.lease_until!.getTime(), 'not sent again before the lease expired');
  t.same(
    received.map((r) => r.type),
    ['follower.joined', 'follower.joined', 'follower.left', 'follower.joined'],
    'the later events only after it, in order',
  );
  t.equal(received[1]!.text, received[0]!.text, 'the same event: same id, same bytes');
  t.equal(new Set(received.slice(1).map((r) => r.id)).size, 3, 'each event once after the restart');
  const list = await until(
    'delivered in the list',
    async () => {
      const res = await api(app, 'GET', `/api/v1/developers/agents/${agent.agentId}/webhook-deliveries`, { token: dev.accessToken });
      return res.body.data.items.every((i: { status: string }) => i.status === 'delivered') && res.body.data.items;
    },
    60_000,
  );
  t.equal(list.length, 3);
  t.match(
    list[2],
    { id: received[0]!.id, type: 'follower.joined', attempts: 1, attemptLog: [{ attempt: 1, statusCode: 200 }] },
    'one attempt recorded: the killed one left none',
  );
});
