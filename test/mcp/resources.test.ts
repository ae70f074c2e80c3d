// MCP resources: an agent and the caller's pool as templates, read from the read models with the
// caller's scopes; a 2025 session subscribed through one API process hears, on the stream another
// process holds, that its pool changed through REST.
import t from 'tap';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { requestSignature } from '../../infra/api-keys.ts';
import { api, apiWithConfig, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { openSessionStream } from './sse.ts';

const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
t.teardown(() => app.close());
const other = await apiWithConfig(app, {});
t.teardown(() => other.close());
const admin = await signIn(app, 'admin@example.test');
const dev = await signIn(app, 'res-dev@example.test');
const alice = await signIn(app, 'res-alice@example.test');
const bob = await signIn(app, 'res-bob@example.test');
const agentId = await followableAgent(
  app,
  { developer: dev.accessToken, admin: admin.accessToken },
  { name: 'Resource agent', venue: 'SPOT_VENUE', minAllocationUsd: 10 },
  { live: true },
);
const SUBS = '/api/v1/users/me/subscriptions';
const followed = await api(app, 'POST', SUBS, { token: alice.accessToken, body: { agentId, allocationAmountUsd: 100 } });
if (followed.status !== 200) throw new Error(JSON.stringify(followed.body));
const POOL = `pool://virtual/${agentId}`;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function rpc(url: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  // The stateless leg may answer an SSE event holding the JSON-RPC answer.
  const json = text.startsWith('{') ? text : text.slice(text.indexOf('data: ') + 6).split('\n')[0]!;
  return { status: res.status, headers: res.headers, body: JSON.parse(json) };
}

t.test("2025 (v1 SDK client): templates, the caller's pools as resources, reads from the read models", async (t) => {
  const client = new ClientV1({ name: 'res-v1', version: '1' });
  await client.connect(new TransportV1(new URL(`${app.url}/mcp`), { requestInit: { headers: bearer(alice.accessToken) } }));
  t.teardown(() => client.close());
  t.match(client.getServerCapabilities(), { resources: { subscribe: true } });
  const { resourceTemplates } = await client.listResourceTemplates();
  t.same(
    resourceTemplates.map((r) => r.uriTemplate),
    ['agent://{agentId}', 'pool://{walletContext}/{agentId}'],
  );
  const { resources } = await client.listResources();
  t.same(
    resources.map((r) => r.uri),
    [POOL],
    "alice's one pool",
  );
  const pool = await client.readResource({ uri: POOL });
  t.match(JSON.parse((pool.contents[0] as { text: string }).text), { agent: agentId, walletContext: 'virtual', allocatedUsd: 100 });
  const agent = await client.readResource({ uri: `agent://${agentId}` });
  t.match(JSON.parse((agent.contents[0] as { text: string }).text), { id: agentId, name: 'Resource agent' });
  await t.rejects(client.readResource({ uri: 'agent://no-such-agent' }), { code: -32602 }, 'an unknown agent: resource not found');
});

t.test('2026 (v2 SDK client): the same resources, stateless', async (t) => {
  const client = new ClientV2({ name: 'res-v2', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new TransportV2(new URL(`${other.url}/mcp`), { requestInit: { headers: bearer(bob.accessToken) } }));
  t.teardown(() => client.close());
  t.same((await client.listResources()).resources, [], 'bob has no pool');
  await t.rejects(client.readResource({ uri: POOL }), { code: -32602 }, "alice's pool is not bob's: not found");
});

t.test('subscribed through one process, the stream on another hears of a change made through REST; an unreadable resource cannot be watched', async (t) => {
  const opened = await rpc(app.url, bearer(alice.accessToken), {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'res-raw', version: '1' } },
  });
  const session = { ...bearer(alice.accessToken), 'mcp-session-id': opened.headers.get('mcp-session-id')! };
  const stream = await openSessionStream(app.url, session);
  t.teardown(() => stream.close());

  const subscribed = await rpc(other.url, session, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: POOL } });
  t.same(subscribed.body, { jsonrpc: '2.0', id: 2, result: {} }, 'subscribed through the other process');
  const watchers = `mcp:watchers:pool:${alice.userId}.${agentId}.virtual`;
  await app.deps.redis.expire(watchers, 5);
  t.equal((await rpc(app.url, session, { jsonrpc: '2.0', id: 9, method: 'ping' })).status, 200);
  t.ok((await app.deps.redis.ttl(watchers)) > 5, 'a request of the session keeps its subscriptions alive as long as the session');
  const foreign = await rpc(other.url, session, { jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: { uri: `pool://real/${agentId}` } });
  t.match(foreign.body, { error: { code: -32602 } }, 'a pool the caller does not have: not found');

  const added = await api(other, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: alice.accessToken, body: { amountUsd: 25 } });
  t.equal(added.status, 200, 'the pool changes through REST on the other process');
  const event = await stream.next(10_000);
  t.same(event.data, { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: POOL } });
  t.match(event.id, /^\d+-\d+$/, 'with an event id to resume from');

  const unsubscribed = await rpc(app.url, session, { jsonrpc: '2.0', id: 4, method: 'resources/unsubscribe', params: { uri: POOL } });
  t.same(unsubscribed.body.result, {});
  t.equal((await api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: alice.accessToken, body: { amountUsd: 5 } })).status, 200);
  t.same(await stream.drain(1000), [], 'nothing after unsubscribing');
});

t.test('prompts: a portfolio review and a pre-trade risk check, listed with their arguments and got with the read models embedded', async (t) => {
  const client = new ClientV1({ name: 'prompts-v1', version: '1' });
  await client.connect(new TransportV1(new URL(`${app.url}/mcp`), { requestInit: { headers: bearer(alice.accessToken) } }));
  t.teardown(() => client.close());
  const { prompts } = await client.listPrompts();
  t.same(
    prompts.map((p) => [p.name, p.arguments?.map((a) => `${a.name}${a.required ? '!' : ''}`)]),
    [
      ['portfolio_review', ['walletContext', 'focus']],
      ['pre_trade_risk_check', ['agentId!', 'amountUsd!', 'walletContext']],
    ],
  );

  const review = await client.getPrompt({ name: 'portfolio_review', arguments: { walletContext: 'virtual' } });
  t.match(review.messages[0], { role: 'user', content: { type: 'text', text: /Review my agent pools in the virtual wallet \(1,/ } });
  t.match(review.messages[1], { content: { type: 'resource', resource: { uri: POOL, mimeType: 'application/json' } } }, 'the pool, embedded');

  const check = await client.getPrompt({ name: 'pre_trade_risk_check', arguments: { agentId, amountUsd: '250' } });
  t.match(check.messages[0], { content: { text: /250 USD of my virtual wallet.*add_allocation/s } });
  t.same(
    check.messages.slice(1).map((m) => (m.content as { resource: { uri: string } }).resource.uri),
    [`agent://${agentId}`, POOL],
    'the agent and the current pool',
  );
  await t.rejects(
    client.getPrompt({ name: 'pre_trade_risk_check', arguments: { agentId, amountUsd: '1e3' } }),
    { code: -32602 },
    'an amount that is not a plain USD figure',
  );
  await t.rejects(
    client.getPrompt({ name: 'pre_trade_risk_check', arguments: { agentId: 'no-such-agent', amountUsd: '10' } }),
    { code: -32602 },
    'an unknown agent',
  );
});

t.test("2026 subscriptions/listen across processes: a pool change reaches its owner's stream only, an agent's reaches everyone listening", async (t) => {
  const listener = async (token: string) => {
    const client = new ClientV2({ name: 'listen-v2', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new TransportV2(new URL(`${other.url}/mcp`), { requestInit: { headers: bearer(token) } }));
    const uris: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => void uris.push(n.params.uri));
    const subscription = await client.listen({ resourceSubscriptions: [POOL, `agent://${agentId}`] });
    t.teardown(async () => {
      await subscription.close();
      await client.close();
    });
    return { uris, subscription };
  };
  const mine = await listener(alice.accessToken);
  const theirs = await listener(bob.accessToken);
  t.same(mine.subscription.honoredFilter, { resourceSubscriptions: [POOL, `agent://${agentId}`] });

  // The change is made through REST on the first process; the listen streams are held by the other.
  t.equal((await api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: alice.accessToken, body: { amountUsd: 10 } })).status, 200);
  const deadline = Date.now() + 10_000;
  while ((mine.uris.length < 2 || theirs.uris.length < 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.same([...mine.uris].sort(), [`agent://${agentId}`, POOL].sort(), 'alice hears of her pool and of the agent');
  await new Promise((r) => setTimeout(r, 300));
  t.same(theirs.uris, [`agent://${agentId}`], "bob hears of the agent, never of alice's pool");
});

t.test('scopes as REST: a key without subscriptions:read reads an agent but not a pool, and cannot watch one', async (t) => {
  const created = await api(app, 'POST', '/api/api-keys', { token: alice.accessToken, body: { name: 'res', scopes: ['agents:read'] } });
  t.equal(created.status, 201);
  const { apiKey, secretKey } = created.body.data as { apiKey: string; secretKey: string };
  let sessionId: string | undefined;
  const signed = (body: unknown) => {
    const timestamp = String(Date.now());
    const signature = requestSignature(secretKey, { timestamp, method: 'POST', path: '/mcp', body: JSON.stringify(body) });
    return rpc(
      app.url,
      { 'x-api-key': apiKey, 'x-timestamp': timestamp, 'x-signature': signature, ...(sessionId ? { 'mcp-session-id': sessionId } : {}) },
      body,
    );
  };
  const opened = await signed({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'res-key', version: '1' } },
  });
  sessionId = opened.headers.get('mcp-session-id')!;
  const agent = await signed({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: `agent://${agentId}` } });
  t.equal(agent.status, 200);
  t.match(agent.body.result.contents[0], { uri: `agent://${agentId}` });
  const pool = await signed({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: POOL } });
  t.equal(pool.status, 403, 'the pool needs subscriptions:read');
  t.match(pool.headers.get('www-authenticate'), /insufficient_scope.*subscriptions:read/);
  const watch = await signed({ jsonrpc: '2.0', id: 4, method: 'resources/subscribe', params: { uri: POOL } });
  t.match(watch.body, { error: { code: -32602, message: /subscriptions:read/ } }, 'nor watch it');
});
