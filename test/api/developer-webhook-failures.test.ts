// Developer webhooks against receivers that fail, through the real app and its worker (a sweep every
// 100 ms, a 1 s time-out): a receiver that does not answer in time is tried again and gets the same
// event; a receiver whose port is closed gets it once it listens; an answer longer than the cap is a
// failed attempt (`response_too_large`) read only up to the cap; a webhook the worker disabled
// after 3 days of failures shows a notice in the developer's list of agents; and WEBHOOK_ALLOW_LOOPBACK
// (development and tests) lets a webhook go to plain http on loopback.
import t from 'tap';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { claimHead, dueAgents, recordAttempt } from '../../projections/webhooks/queries.ts';
import { createWebhookSender } from '../../infra/webhook-sender.ts';
import { deliverToAgent, type WebhookWorkerDeps } from '../../workers/webhooks.ts';
import { api } from '../support/app.ts';
import { listedFollowableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { startClientMetadataHost } from '../support/oauth.ts';
import { until } from '../support/until.ts';
import { readDelivery, webhookTestApp } from '../support/webhooks.ts';

const SUBS = '/api/v1/users/me/subscriptions';
const TIMEOUT_MS = 1_000;

interface Attempt {
  attempt: number;
  statusCode: number | null;
  error: string | null;
}

/** A port nothing listens on (yet). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

t.test('developer webhooks to failing receivers', async (t) => {
  const config = { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_ALLOW_LOOPBACK: 'true' };
  const { app, host, developer: dev, tokens } = await webhookTestApp(t, 'failing-dev@example.test', { config });
  const user = await signIn(app, 'failing-user@example.test');
  const follow = async (agentId: string) =>
    t.equal((await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } })).status, 200);
  const deliveries = async (agentId: string) =>
    (await api(app, 'GET', `/api/v1/developers/agents/${agentId}/webhook-deliveries`, { token: dev.accessToken })).body.data.items as Array<{
      id: string;
      status: string;
      attempts: number;
      lastError: string | null;
      attemptLog: Attempt[];
    }>;
  const delivered = (agentId: string) =>
    until(
      'delivered in the list',
      async () => {
        const items = await deliveries(agentId);
        return items[0]?.status === 'delivered' && items[0];
      },
      30_000,
    );

  await t.test('a receiver that does not answer in time: a time-out, then the same event again, delivered', async (t) => {
    const ids: string[] = [];
    const held: ServerResponse[] = [];
    host.serve('/slow', (req: IncomingMessage, res: ServerResponse) => {
      readDelivery(req, (body) => {
        ids.push(body.id);
        if (ids.length === 1)
          held.push(res); // answered never: the sender gives up after TIMEOUT_MS
        else res.writeHead(200).end();
      });
    });
    t.teardown(() => {
      for (const res of held) res.destroy();
    });
    const agent = await listedFollowableAgent(app, tokens, { name: 'Slow', venue: 'SPOT_VENUE', webhookUrl: `${host.origin}/slow` });
    await follow(agent.agentId);
    const item = await delivered(agent.agentId);
    t.match(item.attemptLog, [
      { attempt: 1, statusCode: null, error: 'timeout' },
      { attempt: 2, statusCode: 200, error: null },
    ]);
    t.equal(ids.length, 2, 'two requests');
    t.same(ids, [item.id, item.id], 'the same event id both times');
  });

  await t.test('a receiver whose port is closed, then listening: connection refused, then delivered', async (t) => {
    const port = await closedPort();
    const agent = await listedFollowableAgent(app, tokens, { name: 'Down', venue: 'SPOT_VENUE', webhookUrl: `https://127.0.0.1:${port}/hook` });
    await follow(agent.agentId);
    const refused = await until('a refused attempt', async () => {
      const [item] = await deliveries(agent.agentId);
      return item && item.attempts > 0 && item;
    });
    t.match(refused, { status: 'pending', lastError: 'connection_refused' });
    const up = await startClientMetadataHost(port);
    t.teardown(() => up.close());
    const ids: string[] = [];
    up.serve('/hook', (req: IncomingMessage, res: ServerResponse) => {
      readDelivery(req, (body) => {
        ids.push(body.id);
        res.writeHead(204).end();
      });
    });
    const item = await delivered(agent.agentId);
    t.equal(item.id, refused.id);
    t.same(ids, [item.id], 'the receiver got it once it listened');
    t.match(item.attemptLog.at(-1), { statusCode: 204, error: null });
    t.ok(
      item.attemptLog.slice(0, -1).every((a) => a.error === 'connection_refused'),
      'every earlier attempt refused',
    );
  });

  await t.test('an answer longer than the cap: a failed attempt, read only up to the cap', async (t) => {
    const offered = 256 * 1024 * 1024;
    const written: number[] = [];
    host.serve('/huge', (req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 120);
        let sent = 0;
        const pump = () => {
          while (sent < offered && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => written.push(sent));
        pump();
      });
    });
    const agent = await listedFollowableAgent(app, tokens, { name: 'Huge', venue: 'SPOT_VENUE', webhookUrl: `${host.origin}/huge` });
    await follow(agent.agentId);
    const item = await until('a failed attempt', async () => {
      const [first] = await deliveries(agent.agentId);
      return first && first.attempts > 0 && first;
    });
    t.match(item, { status: 'pending', lastError: 'response_too_large', attemptLog: [{ attempt: 1, statusCode: null, error: 'response_too_large' }] });
    await until('the receiver saw the connection closed', async () => written.length > 0);
    t.ok(written[0]! < 32 * 1024 * 1024, `the sender stopped reading: ${written[0]} of ${offered} bytes were taken from the receiver`);
    t.equal((await api(app, 'POST', `/api/v1/developers/agents/${agent.agentId}/webhook-deliveries/disable`, { token: dev.accessToken })).status, 200);
  });

  await t.test('disabled by the worker after 3 days of failures: a notice in the developer’s agents; by the developer: none', async (t) => {
    const { pool, config } = app.deps;
    const deps: WebhookWorkerDeps = {
      dispatch: app.deps.dispatch,
      clock: { now: () => new Date(Date.now() + 4 * 24 * 3600_000) },
      config,
      webhooks: app.deps.webhooks,
      webhookOutbox: {
        dueAgents: (now, limit) => dueAgents(pool, now, limit),
        claimHead: (agentId, now, leaseMs) => claimHead(pool, config.JWT_SECRET, agentId, now, leaseMs),
        recordAttempt: (claimed, attempt) => recordAttempt(pool, claimed, attempt),
      },
    };
    const agent = await listedFollowableAgent(app, tokens, { name: 'Given up', venue: 'SPOT_VENUE', webhookUrl: 'https://10.0.0.1/hook' });
    const paused = await listedFollowableAgent(app, tokens, { name: 'Paused by hand', venue: 'SPOT_VENUE', webhookUrl: 'https://10.0.0.2/hook' });
    await follow(agent.agentId);
    await until('the outbox has the follow', async () => (await deliveries(agent.agentId)).length === 1);
    // the app's own worker may hold the head's lease for a moment: 4 days on, the next claim gives it up
    await until('the event given up', async () => {
      await deliverToAgent(deps, agent.agentId);
      return (await deliveries(agent.agentId))[0]?.status === 'failed';
    });
    t.equal((await api(app, 'POST', `/api/v1/developers/agents/${paused.agentId}/webhook-deliveries/disable`, { token: dev.accessToken })).status, 200);
    type Listed = { id: string; webhook?: { url: string; enabled: boolean; disabledReason: string | null; notice: string | null } };
    const mine = async () => {
      const res = await api(app, 'GET', '/api/v1/developers/agents?limit=100', { token: dev.accessToken });
      return res.body.data.items as Listed[];
    };
    const notice = await until('the notice', async () => (await mine()).find((a) => a.id === agent.agentId && a.webhook?.notice)?.webhook);
    t.match(notice, { url: 'https://10.0.0.1/hook', enabled: false, disabledAt: String, disabledReason: 'failing', notice: /failed for 3 days.*enable/ });
    const byHand = await until('the developer’s own disabling', async () => (await mine()).find((a) => a.id === paused.agentId && !a.webhook?.enabled));
    t.match(byHand.webhook, { enabled: false, disabledReason: 'developer', notice: null }, 'no notice for the developer’s own choice');
    const bare = await listedFollowableAgent(app, tokens, { name: 'No webhook', venue: 'SPOT_VENUE' });
    t.equal((await mine()).find((a) => a.id === bare.agentId)?.webhook, undefined, 'no webhook state without a webhookUrl');
    t.equal((await api(app, 'POST', `/api/v1/developers/agents/${agent.agentId}/webhook-deliveries/enable`, { token: dev.accessToken })).status, 200);
    await until('the notice gone once enabled', async () => (await mine()).find((a) => a.id === agent.agentId && a.webhook?.enabled && !a.webhook.notice));
  });
  await t.test('WEBHOOK_ALLOW_LOOPBACK: a plain http receiver on loopback is listed and delivered to', async (t) => {
    const bodies: string[] = [];
    const plain = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    t.teardown(() => {
      plain.closeAllConnections();
      return new Promise<void>((resolve) => plain.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/hook`;
    const agent = await listedFollowableAgent(app, tokens, { name: 'Plain', venue: 'SPOT_VENUE', webhookUrl: url });
    await follow(agent.agentId);
    const item = await delivered(agent.agentId);
    t.equal(JSON.parse(bodies[0]!).id, item.id, 'delivered over plain http');
    const refused = await api(app, 'POST', '/api/v1/developers/agents', {
      token: dev.accessToken,
      body: { name: 'Plain elsewhere', webhookUrl: 'http://dev.example.test/hook' },
    });
    t.equal(refused.status, 400, 'plain http elsewhere is still refused');
    t.match(refused.body.error, { reason: 'VALIDATION_FAILED', message: /webhookUrl must be an https URL/ });
  });
  await t.test('deliveries one after another to one receiver reuse one connection', async (t) => {
    const ports: number[] = [];
    host.serve('/kept', (req: IncomingMessage, res: ServerResponse) => {
      ports.push(req.socket.remotePort!);
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    const sender = createWebhookSender({ timeoutMs: TIMEOUT_MS, allowLoopback: true, ca: host.ca });
    for (let i = 0; i < 3; i++) {
      const sent = await sender.send({ url: `${host.origin}/kept`, secret: 'whsec_x', body: '{}', id: `evt_${i}`, type: 'ping', now: new Date() });
      t.equal(sent.statusCode, 204);
    }
    t.equal(ports.length, 3);
    t.equal(new Set(ports).size, 1, 'one connection for the three');
  });
});
