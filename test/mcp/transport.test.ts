// The MCP endpoint through real HTTP with the SDK's own clients of both majors: v1 over 2025-11-25
// (sessions in Redis, served by another API instance too), v2 over 2026-07-28 (stateless); auth as REST.
import t from 'tap';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { requestSignature } from '../../infra/api-keys.ts';
import { api, apiWithConfig, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

const app = await startTestApp();
t.teardown(() => app.close());
const alice = await signIn(app, 'mcp-alice@example.test');
const bob = await signIn(app, 'mcp-bob@example.test');

const ACCEPT = 'application/json, text/event-stream';
const LEGACY = '2025-11-25';

/** A raw JSON-RPC POST to /mcp (2025 era), as a client without the SDK would send it. */
async function rpc(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': LEGACY, ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const data = text.startsWith('{') ? JSON.parse(text) : text.includes('data: ') ? JSON.parse(text.slice(text.indexOf('data: ') + 6).split('\n')[0]!) : text;
  return { status: res.status, headers: res.headers, body: data };
}

const initialize = (id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'raw-test', version: '1' } },
});
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The order tools/list answers in: by area (marketplace, pools, trades, wallet, developers, then the money tools that move it after a preview). */
const TOOL_ORDER = [
  'list_agents',
  'get_agent',
  'list_my_pools',
  'get_pool_ledger',
  'list_trades',
  'get_wallet',
  'list_my_agents',
  'get_signal_inbox',
  'replay_signal',
  'list_subscribers',
  'follow_agent',
  'add_allocation',
  'withdraw_allocation',
  'stop_following',
  'pause_following',
  'resume_following',
  'wallet_buy',
  'wallet_sell',
  'close_trade',
];

t.test('v1 SDK client over 2025-11-25 with a JWT bearer: initialize answers a session, tools/list, tools/call with structuredContent', async (t) => {
  const transport = new TransportV1(new URL(`${app.url}/mcp`), { requestInit: { headers: bearer(alice.accessToken) } });
  const client = new ClientV1({ name: 'v1-test', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  t.equal(transport.protocolVersion, LEGACY);
  t.match(transport.sessionId, /^[A-Za-z0-9_-]{43}$/, 'a session id');
  const stored = JSON.parse((await app.deps.redis.get(`mcp:session:${transport.sessionId}`))!);
  t.match(stored, { protocolVersion: LEGACY, clientInfo: { name: 'v1-test' }, owner: `jwt:${alice.userId}:${stored.owner.split(':')[2]}` });
  t.ok((await app.deps.redis.ttl(`mcp:session:${transport.sessionId}`)) > 0, 'the session expires');

  const { tools } = await client.listTools();
  t.same(
    tools.map((tool) => tool.name),
    TOOL_ORDER,
    'a deterministic order',
  );
  const wallet = tools.find((tool) => tool.name === 'get_wallet')!;
  t.match(wallet, { title: String, description: String, annotations: { readOnlyHint: true, destructiveHint: false }, outputSchema: { type: 'object' } });

  const listed = await client.callTool({ name: 'list_agents', arguments: { limit: 5 } });
  t.notOk(listed.isError);
  t.match(listed.structuredContent, { agents: Array, total: Number, page: 1, limit: 5 });
  const own = await client.callTool({ name: 'get_wallet', arguments: {} });
  t.match(own.structuredContent, { userId: alice.userId, currentWalletContext: String, wallets: Array });

  const missing = await client.callTool({ name: 'get_agent', arguments: { id: 'no-such-agent' } });
  t.equal(missing.isError, true, 'a refusal is an isError result');
  t.match(JSON.parse((missing.content as Array<{ text: string }>)[0]!.text), { reason: 'AGENT_NOT_FOUND', code: String });

  const sessionId = transport.sessionId;
  await transport.terminateSession();
  t.equal(await app.deps.redis.get(`mcp:session:${sessionId}`), null, 'DELETE /mcp ends the session');
});

t.test('a 2025 session is served by another API instance sharing Redis and the database, and by nobody else', async (t) => {
  const opened = await rpc(app.url, initialize(), bearer(alice.accessToken));
  t.equal(opened.status, 200);
  const sessionId = opened.headers.get('mcp-session-id')!;
  t.ok(sessionId);
  const other = await apiWithConfig(app, {});
  t.teardown(() => other.close());
  const listed = await rpc(other.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...bearer(alice.accessToken), 'mcp-session-id': sessionId });
  t.equal(listed.status, 200, 'another process serves the session');
  t.equal(listed.body.result.tools.length, TOOL_ORDER.length);

  const stolen = await rpc(other.url, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { ...bearer(bob.accessToken), 'mcp-session-id': sessionId });
  t.equal(stolen.status, 404, 'another identity: 404');
  t.match(stolen.body, { jsonrpc: '2.0', error: { code: -32001 } });
  const unknown = await rpc(app.url, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { ...bearer(alice.accessToken), 'mcp-session-id': 'x'.repeat(43) });
  t.equal(unknown.status, 404);

  const stream = await fetch(`${other.url}/mcp/sse`, { headers: { ...bearer(alice.accessToken), accept: 'text/event-stream', 'mcp-session-id': sessionId } });
  t.equal(stream.status, 200, 'GET /mcp/sse is the session stream');
  t.match(stream.headers.get('content-type'), /text\/event-stream/);
  const ended = await fetch(`${other.url}/mcp`, { method: 'DELETE', headers: { ...bearer(alice.accessToken), 'mcp-session-id': sessionId } });
  t.equal(ended.status, 200);
  await stream.text(); // the stream closes when its session ends
  const after = await rpc(app.url, { jsonrpc: '2.0', id: 5, method: 'tools/list' }, { ...bearer(alice.accessToken), 'mcp-session-id': sessionId });
  t.equal(after.status, 404, 'an ended session is gone for every process');
});

t.test('v2 SDK client over 2026-07-28 (stateless) with a JWT bearer: discover, tools/list, tools/call', async (t) => {
  const transport = new TransportV2(new URL(`${app.url}/mcp`), { requestInit: { headers: bearer(alice.accessToken) } });
  const client = new ClientV2({ name: 'v2-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(transport);
  t.teardown(() => client.close());
  t.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  t.match(client.getServerVersion(), { name: 'agent-trading-platform' });
  const { tools } = await client.listTools();
  t.same(
    tools.map((tool) => tool.name),
    TOOL_ORDER,
  );
  const pools = await client.callTool({ name: 'list_my_pools', arguments: {} });
  t.same(pools.structuredContent, { pools: [] });
});

t.test('2026-07-28: Mcp-Method must match the body', async (t) => {
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: {
      ...bearer(alice.accessToken),
      'content-type': 'application/json',
      accept: ACCEPT,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }),
  });
  t.equal(res.status, 400);
  t.match(await res.json(), { jsonrpc: '2.0', error: { code: Number } });
});

t.test('without credentials: 401 JSON-RPC with the MCP resource metadata in WWW-Authenticate', async (t) => {
  const res = await rpc(app.url, initialize());
  t.equal(res.status, 401);
  t.match(res.headers.get('www-authenticate'), `Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp"`);
  t.match(res.body, { jsonrpc: '2.0', id: null, error: { code: -32000, data: { reason: 'AUTHENTICATION_REQUIRED' } } });
  t.notOk('success' in res.body, 'never the REST envelope');
  const metadata = await api(app, 'GET', '/.well-known/oauth-protected-resource/mcp');
  t.match(metadata.body, { resource: `${app.url}/mcp`, authorization_servers: [app.url] });
  const connector = await api(app, 'GET', '/public/directory/connector.json');
  t.match(connector.body.mcp, { url: `${app.url}/mcp`, resource: `${app.url}/mcp` });
});

t.test('DNS rebinding: a foreign Origin or Host is refused', async (t) => {
  const origin = await rpc(app.url, initialize(), { ...bearer(alice.accessToken), origin: 'https://evil.example' });
  t.equal(origin.status, 403);
  t.match(origin.body, { jsonrpc: '2.0', error: { message: /Origin/ } });
  const own = await rpc(app.url, initialize(), { ...bearer(alice.accessToken), origin: app.url });
  t.equal(own.status, 200, 'our own origin is fine');
  const port = new URL(app.url).port;
  const host = await new Promise<number>((resolve, reject) => {
    import('node:http').then(({ request }) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          headers: { host: `rebound.example:${port}`, 'content-type': 'application/json', ...bearer(alice.accessToken) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(initialize()));
    });
  });
  t.equal(host, 403);
});

t.test('API keys: a signed request as REST is served; an unsigned one refused; a key without the scope gets 403 insufficient_scope', async (t) => {
  const created = await api(app, 'POST', '/api/api-keys', { token: alice.accessToken, body: { name: 'mcp', scopes: ['agents:read'] } });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const { apiKey, secretKey } = created.body.data as { apiKey: string; secretKey: string };
  const signed = (body: unknown, extra: Record<string, string> = {}) => {
    const raw = JSON.stringify(body);
    const timestamp = String(Date.now());
    const signature = requestSignature(secretKey, { timestamp, method: 'POST', path: '/mcp', body: raw });
    return { 'x-api-key': apiKey, 'x-timestamp': timestamp, 'x-signature': signature, ...extra };
  };
  const opened = await rpc(app.url, initialize(), signed(initialize()));
  t.equal(opened.status, 200, JSON.stringify(opened.body));
  const sessionId = opened.headers.get('mcp-session-id')!;
  const call = (name: string) => ({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: {} } });
  const agents = await rpc(app.url, call('list_agents'), signed(call('list_agents'), { 'mcp-session-id': sessionId }));
  t.equal(agents.status, 200);
  t.match(agents.body.result.structuredContent, { agents: Array });

  const wallet = await rpc(app.url, call('get_wallet'), signed(call('get_wallet'), { 'mcp-session-id': sessionId }));
  t.equal(wallet.status, 403, 'the key lacks wallet:read');
  t.match(wallet.headers.get('www-authenticate'), /error="insufficient_scope"/);
  t.match(wallet.headers.get('www-authenticate'), /scope="wallet:read"/);

  const unsigned = await rpc(app.url, call('list_agents'), { 'x-api-key': apiKey, 'mcp-session-id': sessionId });
  t.equal(unsigned.status, 401);
  t.match(unsigned.body, { jsonrpc: '2.0', error: { data: { reason: 'INVALID_SIGNATURE' } } });
  const headers = signed(call('list_agents'), { 'mcp-session-id': sessionId });
  t.equal((await rpc(app.url, call('list_agents'), headers)).status, 200);
  const replayed = await rpc(app.url, call('list_agents'), headers);
  t.equal(replayed.status, 401, 'a signature is good for one request');
  t.match(replayed.body, { jsonrpc: '2.0', error: { data: { reason: 'INVALID_SIGNATURE' } } });
});
