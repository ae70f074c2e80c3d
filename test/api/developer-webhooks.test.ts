// Developer webhooks end to end, with a real https receiver on 127.0.0.1 (its self-signed
// certificate trusted through the app's test-only option): a follow reaches the agent's webhookUrl
// signed with the agent's signing secret, as the inbound signal webhook verifies; a receiver that
// fails twice gets the same event id three times and the agent's next event only after it; the
// deliveries route shows each attempt; a delivery is sent again on request; disabled, events queue
// unsent; the test ping is sent at once; private addresses are refused before any connection.
import t from 'tap';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { poolId } from '../../domain/pool/state.ts';
import { anonymizedSubscriberId } from '../../infra/anonymize.ts';
import { WEBHOOK_API_VERSION } from '../../domain/webhook/delivery.ts';
import { createWebhookSender, WEBHOOK_ID_HEADER } from '../../infra/webhook-sender.ts';
import { outboundSigningKey, readWebhookHeaders, signsBytes } from '../../infra/signing/webhook.ts';
import { WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '../../infra/webhook-sender.ts';
import { api, dispatch } from '../support/app.ts';
import { appendFacts, writeSignal } from '../support/facts.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';
import { listedFollowableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { until } from '../support/until.ts';
import { webhookTestApp } from '../support/webhooks.ts';

interface Received {
  headers: IncomingMessage['headers'];
  text: string;
  body: { id: string; type: string; createdAt: string; apiVersion: string; data: Record<string, unknown> };
}

const SUBS = '/api/v1/users/me/subscriptions';

t.test('developer webhooks', async (t) => {
  const { app, host, developer: dev, tokens } = await webhookTestApp(t, 'hooks-dev@example.test', { config: { RATE_LIMIT_WEBHOOK_TEST_PINGS_PER_MIN: '2' } });
  const received = new Map<string, Received[]>();
  /** `path` records what arrives and answers the statuses given in turn (200 once they run out). */
  const receiver = (path: string, statuses: number[] = []) => {
    received.set(path, []);
    host.serve(path, (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        received.get(path)!.push({ headers: req.headers, text, body: JSON.parse(text) });
        res.writeHead(statuses.shift() ?? 200).end();
      });
    });
    return `${host.origin}${path}`;
  };

  const user = await signIn(app, 'hooks-user@example.test');
  const follow = async (agentId: string) =>
    t.equal((await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } })).status, 200);
  const deliveries = (agentId: string, token = dev.accessToken) => api(app, 'GET', `/api/v1/developers/agents/${agentId}/webhook-deliveries`, { token });

  await t.test('a follower joining: one delivery, signed under the key derived from the agent’s signing secret, never as an inbound signal', async (t) => {
    const url = receiver('/joined');
    const agent = await listedFollowableAgent(app, tokens, { name: 'Hooked', venue: 'SPOT_VENUE', webhookUrl: url });
    await follow(agent.agentId);
    const [delivery] = await until('the delivery', async () => received.get('/joined')!.length > 0 && received.get('/joined')!);
    const headers = readWebhookHeaders({
      timestampHeader: delivery!.headers[WEBHOOK_TIMESTAMP_HEADER],
      signatureHeader: delivery!.headers[WEBHOOK_SIGNATURE_HEADER],
      nowMs: Date.now(),
    });
    t.ok(headers.ok, 'fresh, well-formed signature headers');
    if (!headers.ok) return;
    t.ok(
      signsBytes(outboundSigningKey(agent.secret), headers.signature, Buffer.from(delivery!.text)),
      'the signature covers the body’s bytes under the derived key',
    );
    t.notOk(signsBytes(outboundSigningKey('whsec_other'), headers.signature, Buffer.from(delivery!.text)), 'and no other secret’s');
    t.notOk(
      signsBytes(agent.secret, headers.signature, Buffer.from(delivery!.text)),
      'never under the secret itself: a delivery is no valid inbound signature',
    );
    t.equal(delivery!.headers['x-svc-signature'], undefined, 'nor does it carry the inbound header names');
    t.match(delivery!.body, {
      id: /^evt_[0-9a-f]{32}$/,
      type: 'follower.joined',
      apiVersion: WEBHOOK_API_VERSION,
      data: { subscriberId: anonymizedSubscriberId(app.deps.config.JWT_SECRET, agent.agentId, user.userId), walletContext: 'virtual', walletMode: String },
    });
    t.equal(delivery!.headers[WEBHOOK_ID_HEADER], delivery!.body.id);
    t.notOk(delivery!.text.includes(user.userId), 'no user id reaches the developer, nor the pool id holding it');
    const listed = await until('delivered in the list', async () => {
      const res = await deliveries(agent.agentId);
      return res.body.data.items[0]?.status === 'delivered' && res.body.data;
    });
    t.match(listed.items[0], {
      id: delivery!.body.id,
      type: 'follower.joined',
      attempts: 1,
      lastStatusCode: 200,
      nextAttemptAt: null,
      attemptLog: [{ attempt: 1, statusCode: 200 }],
    });
    t.equal(listed.pagination.total, 1);
    t.equal((await deliveries(agent.agentId, user.accessToken)).status, 403, 'another user may not read them');

    const path = `/api/v1/developers/agents/${agent.agentId}/webhook-deliveries`;
    const again = await api(app, 'POST', `${path}/${delivery!.body.id}/redeliver`, { token: dev.accessToken });
    t.equal(again.status, 200);
    t.match(again.body.data, { id: delivery!.body.id, status: 'pending', attempts: 1 });
    const second = await until('the redelivery', async () => received.get('/joined')![1]);
    t.equal(second.text, delivery!.text, 'the same body, bytes and id');
    const after = await until('delivered again', async () => {
      const res = await deliveries(agent.agentId);
      return res.body.data.items[0]?.status === 'delivered' && res.body.data.items[0];
    });
    t.match(after, { attempts: 2, attemptLog: [{ attempt: 1 }, { attempt: 2, statusCode: 200 }] });
    const unknown = await api(app, 'POST', `${path}/evt_00000000000000000000000000000000/redeliver`, { token: dev.accessToken });
    t.equal(unknown.status, 404);
    t.equal(unknown.body.error.reason, 'WEBHOOK_DELIVERY_NOT_FOUND');
    t.equal((await api(app, 'POST', `${path}/${delivery!.body.id}/redeliver`, { token: user.accessToken })).status, 403);
  });

  await t.test('500 twice then 200: the same event id three times, backed off, and the next event only after it', async (t) => {
    const url = receiver('/flaky', [500, 500]);
    const agent = await listedFollowableAgent(app, tokens, { name: 'Flaky', venue: 'SPOT_VENUE', webhookUrl: url });
    await follow(agent.agentId);
    t.equal((await api(app, 'DELETE', `${SUBS}/${agent.agentId}`, { token: user.accessToken })).status, 200);
    const got = await until('four requests', async () => received.get('/flaky')!.length >= 4 && received.get('/flaky')!, 20_000);
    t.same(
      got.map((r) => r.body.type),
      ['follower.joined', 'follower.joined', 'follower.joined', 'follower.left'],
      'in order: the stop waits behind the retried follow',
    );
    t.equal(new Set(got.slice(0, 3).map((r) => r.body.id)).size, 1, 'one id for the three attempts');
    t.not(got[3]!.body.id, got[0]!.body.id);
    t.equal(new Set(got.slice(0, 3).map((r) => r.headers[WEBHOOK_SIGNATURE_HEADER])).size, 3, 'each attempt signed anew');
    const listed = await until('both delivered', async () => {
      const res = await deliveries(agent.agentId);
      return res.body.data.items.every((i: { status: string }) => i.status === 'delivered') && res.body.data;
    });
    const [left, joined] = listed.items;
    t.match(left, { type: 'follower.left', attempts: 1 });
    t.match(joined, { type: 'follower.joined', status: 'delivered', attempts: 3, lastStatusCode: 200 });
    t.same(
      joined.attemptLog.map((a: { statusCode: number }) => a.statusCode),
      [500, 500, 200],
    );
    const at = joined.attemptLog.map((a: { at: string }) => Date.parse(a.at));
    t.ok(at[1] - at[0] >= 150, `the second attempt waited (${at[1] - at[0]} ms; base 300 ms, half of it at least)`);
  });

  await t.test('trades, settled and claimed fees, an executed signal: each once, in the log’s order', async (t) => {
    const url = receiver('/all');
    const agent = await listedFollowableAgent(app, tokens, { name: 'Everything', venue: 'SPOT_VENUE', webhookUrl: url });
    await follow(agent.agentId);
    const pool = poolId(user.userId, agent.agentId, 'virtual');
    await dispatch(app, 'RecordPoolFact', { poolId: pool, fact: { type: 'OpenTrade', data: oneTrade('wh-1', 10_000_000) } });
    await dispatch(app, 'RecordPoolFact', { poolId: pool, fact: { type: 'CloseTrade', data: { tradeId: 'wh-1', realizedPnlMicro: 2_000_000 } } });
    const at = new Date().toISOString();
    const fees = {
      settlementId: `${pool}#fees-1`,
      feeMicro: 400_000,
      platformMicro: 200_000,
      creatorMicro: 200_000,
      realizedMicro: 2_000_000,
      unrealizedMicro: 0,
    };
    await appendFacts(app, `pool-${pool}`, [{ type: 'FeesSettled', data: { ...fees, feesChargedBeforeMicro: 0, successFeePercent: 20, at } }]);
    const results = [{ poolId: pool, status: 'executed' as const, tradeIds: ['wh-2'] }];
    await writeSignal(app, agent.agentId, { signalId: 'wh-signal-1', text: 'LONG $SOL entry 150 sl 140 tp 160' }, new Date(), { results });
    const transfer = {
      transferId: `fees-${agent.agentId}#claim-1`,
      amountMicro: 200_000,
      from: { kind: 'fees', agentId: agent.agentId, developerId: dev.userId },
      to: { kind: 'wallet', userId: dev.userId, walletContext: 'real' },
    };
    await appendFacts(app, `fees-${agent.agentId}`, [{ type: 'FeesClaimed', data: { transfer, parts: [{ poolId: pool, amountMicro: 200_000 }], at } }]);
    const got = await until('six deliveries', async () => received.get('/all')!.length >= 6 && received.get('/all')!);
    t.same(
      got.map((r) => r.body.type),
      ['follower.joined', 'trade.opened', 'trade.closed', 'fees.settled', 'signal.executed', 'fees.claimed'],
    );
    const follower = { subscriberId: anonymizedSubscriberId(app.deps.config.JWT_SECRET, agent.agentId, user.userId), walletContext: 'virtual' };
    t.match(got[1]!.body.data, { ...follower, tradeId: 'wh-1', marginMicro: 10_000_000 });
    t.match(got[2]!.body.data, { ...follower, tradeId: 'wh-1', realizedPnlMicro: 2_000_000 });
    t.match(got[3]!.body.data, { ...follower, feeMicro: 400_000, creatorMicro: 200_000 });
    t.match(got[4]!.body.data, {
      signalId: 'wh-signal-1',
      outcome: 'executed',
      executionResults: [{ ...follower, executionResult: { status: 'executed', tradeIds: ['wh-2'] } }],
    });
    t.match(got[5]!.body.data, { claimId: transfer.transferId, amountMicro: 200_000, parts: [{ ...follower, amountMicro: 200_000 }] });
    t.equal(new Set(got.map((r) => r.body.id)).size, 6, 'six ids');
    t.notOk(JSON.stringify(got.map((r) => r.body)).includes(user.userId), 'no follower’s user id in any body');
  });

  await t.test('disabled: events queue and nothing is sent; enabled: they go, in order', async (t) => {
    const url = receiver('/paused');
    const agent = await listedFollowableAgent(app, tokens, { name: 'Paused', venue: 'SPOT_VENUE', webhookUrl: url });
    const path = `/api/v1/developers/agents/${agent.agentId}/webhook-deliveries`;
    const off = await api(app, 'POST', `${path}/disable`, { token: dev.accessToken });
    t.equal(off.status, 200);
    t.same(off.body.data, { agentId: agent.agentId, webhookEnabled: false });
    t.equal((await api(app, 'POST', `${path}/disable`, { token: dev.accessToken })).status, 200, 'again: no change, no refusal');
    t.equal((await api(app, 'POST', `${path}/enable`, { token: user.accessToken })).status, 403, 'only its developer');
    await follow(agent.agentId);
    t.equal((await api(app, 'DELETE', `${SUBS}/${agent.agentId}`, { token: user.accessToken })).status, 200);
    await until('two queued', async () => (await deliveries(agent.agentId)).body.data.pagination.total === 2);
    await new Promise((r) => setTimeout(r, 600)); // six sweeps
    t.same(received.get('/paused'), [], 'nothing sent while disabled');
    t.match((await deliveries(agent.agentId)).body.data.items, [
      { status: 'pending', attempts: 0 },
      { status: 'pending', attempts: 0 },
    ]);
    const on = await api(app, 'POST', `${path}/enable`, { token: dev.accessToken });
    t.same(on.body.data, { agentId: agent.agentId, webhookEnabled: true });
    const got = await until('both sent', async () => received.get('/paused')!.length >= 2 && received.get('/paused')!);
    t.same(
      got.map((r) => r.body.type),
      ['follower.joined', 'follower.left'],
    );
    const bare = await listedFollowableAgent(app, tokens, { name: 'No hook', venue: 'SPOT_VENUE' });
    const none = await api(app, 'POST', `/api/v1/developers/agents/${bare.agentId}/webhook-deliveries/disable`, { token: dev.accessToken });
    t.equal(none.status, 409);
    t.equal(none.body.error.reason, 'NO_WEBHOOK_URL');
  });

  await t.test('an unreachable private address: the attempt is recorded with its error and a next try', async (t) => {
    const agent = await listedFollowableAgent(app, tokens, { name: 'Private', venue: 'SPOT_VENUE', webhookUrl: 'https://10.0.0.1/hook' });
    await follow(agent.agentId);
    const item = await until('a failed attempt', async () => {
      const res = await deliveries(agent.agentId);
      return res.body.data.items[0]?.attempts > 0 && res.body.data.items[0];
    });
    t.match(item, { status: 'pending', lastStatusCode: null, lastError: 'address_not_allowed', nextAttemptAt: String });
  });

  await t.test('the test ping: sent at once, signed; refused without a webhookUrl or to another user', async (t) => {
    const url = receiver('/ping');
    const agent = await listedFollowableAgent(app, tokens, { name: 'Pinged', venue: 'SPOT_VENUE', webhookUrl: url });
    const ping = await api(app, 'POST', `/api/v1/developers/agents/${agent.agentId}/webhook-deliveries/test`, { token: dev.accessToken });
    t.equal(ping.status, 200);
    t.match(ping.body.data, { type: 'ping', url, delivered: true, statusCode: 200, error: null });
    const [got] = received.get('/ping')!;
    t.equal(got?.body.id, ping.body.data.id, 'the receiver had it before the answer');
    const headers = readWebhookHeaders({
      timestampHeader: got!.headers[WEBHOOK_TIMESTAMP_HEADER],
      signatureHeader: got!.headers[WEBHOOK_SIGNATURE_HEADER],
      nowMs: Date.now(),
    });
    t.ok(headers.ok && signsBytes(outboundSigningKey(agent.secret), headers.signature, Buffer.from(got!.text)));
    const pingPath = `/api/v1/developers/agents/${agent.agentId}/webhook-deliveries/test`;
    t.equal((await api(app, 'POST', pingPath, { token: dev.accessToken })).status, 200, 'a second ping within the minute');
    const limited = await api(app, 'POST', pingPath, { token: dev.accessToken });
    t.equal(limited.status, 429, 'the third: over the 2 pings a minute for this agent');
    t.match(limited.body.error, { reason: 'RATE_LIMITED', retryAfterSeconds: Number });
    t.equal(received.get('/ping')!.length, 2, 'the refused ping sent nothing');
    const sibling = await listedFollowableAgent(app, tokens, { name: 'Pinged too', venue: 'SPOT_VENUE', webhookUrl: url });
    const siblingPing = await api(app, 'POST', `/api/v1/developers/agents/${sibling.agentId}/webhook-deliveries/test`, { token: dev.accessToken });
    t.equal(siblingPing.status, 200, 'another agent has a budget of its own');
    t.equal((await api(app, 'GET', '/api/v1/developers/agents', { token: dev.accessToken })).status, 200, 'and the developer’s other requests go on');
    const other = await api(app, 'POST', `/api/v1/developers/agents/${agent.agentId}/webhook-deliveries/test`, { token: user.accessToken });
    t.equal(other.status, 403);
    const bare = await listedFollowableAgent(app, tokens, { name: 'Bare', venue: 'SPOT_VENUE' });
    const none = await api(app, 'POST', `/api/v1/developers/agents/${bare.agentId}/webhook-deliveries/test`, { token: dev.accessToken });
    t.equal(none.status, 409);
    t.equal(none.body.error.reason, 'NO_WEBHOOK_URL');
  });
});

t.test('the sender refuses private, loopback, link-local and plain-http URLs without connecting', async (t) => {
  const connections: string[] = [];
  const listener = createTcpServer((socket: Socket) => {
    connections.push(`${socket.remoteAddress}`);
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => listener.close(() => resolve())));
  const port = (listener.address() as AddressInfo).port;
  const sender = createWebhookSender({ timeoutMs: 2_000 });
  const urls: Array<[string, RegExp]> = [
    [`https://127.0.0.1:${port}/hook`, /^address_not_allowed$/],
    [`https://localhost:${port}/hook`, /^address_not_allowed$/],
    [`https://2130706433:${port}/hook`, /^address_not_allowed$/],
    [`https://[::1]:${port}/hook`, /^address_not_allowed$/],
    [`https://[::ffff:127.0.0.1]:${port}/hook`, /^address_not_allowed$/],
    ['https://10.0.0.1/hook', /^address_not_allowed$/],
    ['https://172.16.5.4/hook', /^address_not_allowed$/],
    ['https://192.168.1.1/hook', /^address_not_allowed$/],
    ['https://169.254.169.254/latest/meta-data', /^address_not_allowed$/],
    ['https://100.64.0.1/hook', /^address_not_allowed$/],
    ['https://[fd00::1]/hook', /^address_not_allowed$/],
    ['https://[fe80::1]/hook', /^address_not_allowed$/],
    ['https://0.0.0.0/hook', /^address_not_allowed$/],
    [`http://127.0.0.1:${port}/hook`, /^https_required$/],
    ['http://example.com/hook', /^https_required$/],
  ];
  for (const [url, why] of urls) {
    const sent = await sender.send({ url, secret: 'whsec_x', body: '{}', id: 'evt_x', type: 'ping', now: new Date() });
    t.equal(sent.statusCode, null, url);
    t.match(sent.error, why, url);
  }
  t.same(connections, [], 'the listener saw no connection');
});
