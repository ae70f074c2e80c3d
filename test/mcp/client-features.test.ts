// What the service offers an MCP client beyond tools, through real HTTP on two API instances sharing
// PostgreSQL and Redis (as two processes would): a 2025 session's log level, kept for every process;
// a request to the client (sampling) whose answer reaches another process; completions of agent ids
// and wallet contexts, scoped to the caller; a 2026 requestState that only its own user can echo.
// The tools that log, sample and ask are the conformance runner's fixtures (a test build's only).
import t, { type Test } from 'tap';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { api, apiWithConfig, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { useConformanceFixtures } from '../support/mcp-fixtures.ts';
import { postStream, type SseEvent } from './sse.ts';

useConformanceFixtures();
const app = await startTestApp({ config: { ADMIN_EMAILS: 'features-admin@example.test' } });
t.teardown(() => app.close());
const other = await apiWithConfig(app, {});
t.teardown(() => other.close());
const admin = await signIn(app, 'features-admin@example.test');
const dev = await signIn(app, 'features-dev@example.test');
const alice = await signIn(app, 'features-alice@example.test');
const bob = await signIn(app, 'features-bob@example.test');
const agentId = await followableAgent(
  app,
  { developer: dev.accessToken, admin: admin.accessToken },
  { name: 'Completion agent', venue: 'SPOT_VENUE', minAllocationUsd: 10 },
  { live: true },
);
const followed = await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: alice.accessToken, body: { agentId, allocationAmountUsd: 100 } });
if (followed.status !== 200) throw new Error(JSON.stringify(followed.body));

const LEGACY = '2025-11-25';
const MODERN = '2026-07-28';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Opens a 2025 session at `url` for `token` with the client capabilities given; its id. */
async function openSession(url: string, token: string, capabilities: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...bearer(token) },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities, clientInfo: { name: 'features', version: '1' } },
    }),
  });
  if (res.status !== 200) throw new Error(`initialize: ${res.status} ${await res.text()}`);
  return res.headers.get('mcp-session-id')!;
}

const sessionHeaders = (token: string, session: string) => ({ ...bearer(token), 'mcp-session-id': session, 'mcp-protocol-version': LEGACY });

/** Every event of one request's stream up to and with its answer. */
async function exchange(url: string, headers: Record<string, string>, body: { id: number } & Record<string, unknown>): Promise<SseEvent['data'][]> {
  const stream = await postStream(url, headers, { jsonrpc: '2.0', ...body });
  const events: SseEvent['data'][] = [];
  try {
    for (;;) {
      const { data } = await stream.next();
      events.push(data);
      if (data.id === body.id && !data.method) return events;
    }
  } finally {
    stream.close();
  }
}

const logNotices = (events: SseEvent['data'][]) => events.filter((e) => e.method === 'notifications/message').map((e) => e.params!.level);
const callLoggingTool = (url: string, headers: Record<string, string>, id: number) =>
  exchange(url, headers, { id, method: 'tools/call', params: { name: 'test_tool_with_logging', arguments: {} } });

t.test('2025: logging/setLevel holds for the session on every process; a session that never set one gets no info notice', async (t) => {
  const session = await openSession(app.url, alice.accessToken);
  const headers = sessionHeaders(alice.accessToken, session);
  t.same(logNotices(await callLoggingTool(app.url, headers, 1)), [], 'no level set: only warning and worse, and the tool logs info');

  const set = await fetch(`${other.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'info' } }),
  });
  t.equal(set.status, 200, 'setLevel answered by the other process');
  t.match(JSON.parse((await app.deps.redis.get(`mcp:session:${session}`))!), { logLevel: 'info' }, 'kept in the session record');
  t.same(logNotices(await callLoggingTool(app.url, headers, 3)), ['info', 'info', 'info'], 'this process honours it');

  await exchange(app.url, headers, { id: 4, method: 'logging/setLevel', params: { level: 'error' } });
  t.same(logNotices(await callLoggingTool(other.url, headers, 5)), [], 'error: the info notices are held back, on the other process too');
});

t.test("2025: a sampling request goes on the POST's stream; its answer, POSTed to another process, reaches the waiting tool", async (t) => {
  const session = await openSession(app.url, alice.accessToken, { sampling: {} });
  const headers = sessionHeaders(alice.accessToken, session);
  const stream = await postStream(app.url, headers, {
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'test_sampling', arguments: { prompt: 'Say hi' } },
  });
  t.teardown(() => stream.close());
  const { data: request } = await stream.next();
  t.match(request, { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }], maxTokens: 100 } });
  t.match(request.id, /^s-[A-Za-z0-9_-]{16}$/, "an id unique in the session, not the per-request server's own count");

  const answer = { jsonrpc: '2.0', id: request.id, result: { role: 'assistant', content: { type: 'text', text: 'hi from the model' }, model: 'test-model' } };
  const posted = await fetch(`${other.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(answer),
  });
  t.equal(posted.status, 202, 'the other process accepts the answer');
  const { data: result } = await stream.next();
  t.match(result, { id: 7, result: { content: [{ type: 'text', text: /hi from the model/ }] } }, 'the tool got it through Redis');
});

t.test("2025: a session whose client did not declare sampling gets the tool's error, never a request it cannot answer", async (t) => {
  const session = await openSession(app.url, alice.accessToken);
  const events = await exchange(app.url, sessionHeaders(alice.accessToken, session), {
    id: 1,
    method: 'tools/call',
    params: { name: 'test_sampling', arguments: { prompt: 'Say hi' } },
  });
  t.same(
    events.filter((e) => e.method && !e.method.startsWith('notifications/')),
    [],
    'no request to the client',
  );
  t.match(events.at(-1), { result: { isError: true, content: [{ text: /did not declare the required capability/ }] } });
});

const modernClient = async (t: Test, token: string) => {
  const client = new ClientV2({ name: 'features-v2', version: '1' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new TransportV2(new URL(`${other.url}/mcp`), { requestInit: { headers: bearer(token) } }));
  t.teardown(() => client.close());
  return client;
};

t.test("completions: agent ids from the marketplace, wallet contexts, and only the caller's own pools", async (t) => {
  const aliceClient = await modernClient(t, alice.accessToken);
  t.match(aliceClient.getServerCapabilities(), { completions: {}, logging: {} });
  const complete = (client: ClientV2, ref: Record<string, string>, name: string, value: string, context?: Record<string, string>) =>
    client.complete({ ref, argument: { name, value }, ...(context ? { context: { arguments: context } } : {}) } as never).then((r) => r.completion.values);

  const agentTemplate = { type: 'ref/resource', uri: 'agent://{agentId}' };
  t.ok((await complete(aliceClient, agentTemplate, 'agentId', agentId.slice(0, 6))).includes(agentId), "a followable agent by its id's start");
  t.same(await complete(aliceClient, agentTemplate, 'agentId', 'no-agent-starts-like-this'), []);
  const risk = { type: 'ref/prompt', name: 'pre_trade_risk_check' };
  t.ok((await complete(aliceClient, risk, 'agentId', '')).includes(agentId), "the risk check prompt's agent");
  t.same(await complete(aliceClient, risk, 'walletContext', 'v'), ['virtual']);

  const poolTemplate = { type: 'ref/resource', uri: 'pool://{walletContext}/{agentId}' };
  t.same(await complete(aliceClient, poolTemplate, 'agentId', '', { walletContext: 'virtual' }), [agentId], 'alice: her pool');
  t.same(await complete(aliceClient, poolTemplate, 'agentId', '', { walletContext: 'real' }), [], 'none in her real wallet');
  t.same(await complete(await modernClient(t, bob.accessToken), poolTemplate, 'agentId', ''), [], "bob: not alice's pools");
});

/** A raw 2026-07-28 tools/call (the SDK client would answer the input itself). */
async function modernCall(token: string, name: string, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': name,
      ...bearer(token),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: {},
        ...extra,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        },
      },
    }),
  });
  const text = await res.text();
  return JSON.parse(text.startsWith('{') ? text : text.slice(text.lastIndexOf('data: ') + 6).split('\n')[0]!) as {
    result?: Record<string, unknown>;
    error?: { code: number };
  };
}

t.test('2026: a requestState comes back sealed; echoed by another user, or altered, it is refused before the tool runs', async (t) => {
  const first = await modernCall(alice.accessToken, 'test_input_required_result_request_state');
  t.match(first.result, { resultType: 'input_required', requestState: /^v1\./ });
  const retry = { inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: first.result!.requestState };
  t.match(
    (await modernCall(alice.accessToken, 'test_input_required_result_request_state', retry)).result,
    { content: [{ text: /state round 1/ }] },
    'its own user: served',
  );
  t.match(await modernCall(bob.accessToken, 'test_input_required_result_request_state', retry), { error: { code: -32602 } }, 'another user: refused');
  t.match(
    await modernCall(alice.accessToken, 'test_input_required_result_request_state', { ...retry, requestState: `${retry.requestState}x` }),
    { error: { code: -32602 } },
    'altered: refused',
  );
});
