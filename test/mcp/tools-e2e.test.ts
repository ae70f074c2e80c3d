// Money tools end to end: the SDK's own clients of both majors over real HTTP at /mcp (v1 over a
// 2025-11-25 session, v2 over 2026-07-28), a user following an agent and withdrawing from its pool,
// each move previewed first and made by the same call with the preview's handle; the read tools
// of pools, trades and developers on the wire; per-tool scopes for an API key.
import t from 'tap';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { requestSignature } from '../../infra/api-keys.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';

const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
t.teardown(() => app.close());
const admin = await signIn(app, 'admin@example.test');
const dev = await signIn(app, 'dev@example.test');

interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, any>;
  content?: unknown;
}
type CallTool = (name: string, args: Record<string, unknown>) => Promise<ToolResult>;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function v1Client(token: string): Promise<{ call: CallTool; close: () => Promise<void> }> {
  const client = new ClientV1({ name: 'v1-tools', version: '1.0.0' });
  await client.connect(new TransportV1(new URL(`${app.url}/mcp`), { requestInit: { headers: bearer(token) } }));
  return { call: (name, args) => client.callTool({ name, arguments: args }) as Promise<ToolResult>, close: () => client.close() };
}

async function v2Client(token: string): Promise<{ call: CallTool; close: () => Promise<void> }> {
  const client = new ClientV2({ name: 'v2-tools', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new TransportV2(new URL(`${app.url}/mcp`), { requestInit: { headers: bearer(token) } }));
  t.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  return { call: (name, args) => client.callTool({ name, arguments: args }) as Promise<ToolResult>, close: () => client.close() };
}

const errorOf = (result: ToolResult) => JSON.parse((result.content as Array<{ text: string }>)[0]!.text);

for (const [era, connect] of [
  ['v1 SDK client over 2025-11-25', v1Client],
  ['v2 SDK client over 2026-07-28', v2Client],
] as const) {
  t.test(`${era}: follow and withdraw are previewed, confirmed once with the handle, and a reused handle is refused`, async (t) => {
    const user = await signIn(app, `e2e-${era.slice(0, 2)}@example.test`);
    const agentId = await followableAgent(
      app,
      { developer: dev.accessToken, admin: admin.accessToken },
      { name: `E2E ${era.slice(0, 2)}`, venue: 'SPOT_VENUE', minAllocationUsd: 10 },
      { live: true },
    );
    const { call, close } = await connect(user.accessToken);
    t.teardown(close);
    const walletUsd = async () => {
      const wallet = (await call('get_wallet', {})).structuredContent!;
      return wallet.wallets.find((w: { walletContext: string }) => w.walletContext === 'virtual').balanceUsd as number;
    };
    const startUsd = await walletUsd();

    const previewed = await call('follow_agent', { agentId, allocationAmountUsd: 40 });
    t.notOk(previewed.isError);
    t.match(previewed.structuredContent, {
      status: 'preview',
      preview: { moves: [{ to: `pool of agent ${agentId}`, amountUsd: 40 }], refusal: null },
      confirmation: { handle: String, expiresAt: String },
    });
    t.same((await call('list_my_pools', {})).structuredContent, { pools: [] }, 'the preview followed nobody');
    t.equal(await walletUsd(), startUsd, 'the preview moved nothing');

    const handle = previewed.structuredContent!.confirmation.handle as string;
    const followed = await call('follow_agent', { agentId, allocationAmountUsd: 40, confirmationHandle: handle });
    t.notOk(followed.isError);
    t.match(followed.structuredContent, { status: 'done', result: { message: /Now following/, subscription: { allocatedUsd: 40 } } });
    const { pools } = (await call('list_my_pools', {})).structuredContent!;
    t.match(pools, [{ agent: agentId, allocatedUsd: 40 }], 'the pool is listed');
    t.equal(await walletUsd(), startUsd - 40);

    const withdraw = await call('withdraw_allocation', { agentId, amountUsd: 15 });
    t.match(withdraw.structuredContent, { status: 'preview', preview: { moves: [{ amountUsd: 15 }] }, confirmation: { handle: String } });
    t.equal(await walletUsd(), startUsd - 40, 'the withdrawal preview moved nothing');
    const withdrawHandle = withdraw.structuredContent!.confirmation.handle as string;
    const withdrawn = await call('withdraw_allocation', { agentId, amountUsd: 15, confirmationHandle: withdrawHandle });
    t.match(withdrawn.structuredContent, { status: 'done', result: { subscription: { allocatedUsd: 25 } } });
    t.equal(await walletUsd(), startUsd - 25);

    const reused = await call('withdraw_allocation', { agentId, amountUsd: 15, confirmationHandle: withdrawHandle });
    t.equal(reused.isError, true, 'a reused handle is an isError result');
    t.match(errorOf(reused), { reason: 'CONFIRMATION_INVALID' });
    const refollowed = await call('follow_agent', { agentId, allocationAmountUsd: 40, confirmationHandle: handle });
    t.match(errorOf(refollowed), { reason: 'CONFIRMATION_INVALID' });
    t.equal(await walletUsd(), startUsd - 25, 'nothing moved again');
    t.match((await call('list_my_pools', {})).structuredContent!.pools, [{ agent: agentId, allocatedUsd: 25 }]);

    const ledger = await call('get_pool_ledger', { agentId });
    t.notOk(ledger.isError, 'the ledger validates against its output schema on the wire');
    t.ok(
      ledger.structuredContent!.items.some((item: { balances: { allocatedUsd: number } | null }) => item.balances?.allocatedUsd === 25),
      'the ledger shows the withdrawal',
    );
    t.match((await call('list_trades', {})).structuredContent, { items: [], pagination: { total: 0 } });

    const developer = await connect(dev.accessToken);
    t.teardown(developer.close);
    const agents = await developer.call('list_my_agents', { limit: 100 });
    t.notOk(agents.isError);
    t.ok(agents.structuredContent!.items.some((a: { id: string }) => a.id === agentId));
    t.match((await developer.call('list_subscribers', { agentId })).structuredContent, { items: [{ walletContext: 'virtual', status: 'active' }] });
    t.match((await developer.call('get_signal_inbox', { agentId })).structuredContent, { items: [], pagination: { total: 0 } });
    t.match(errorOf(await developer.call('replay_signal', { agentId, signalId: 'none' })), { reason: 'SIGNAL_NOT_FOUND' });
    t.match(errorOf(await call('list_subscribers', { agentId })), { reason: 'NOT_AGENT_OWNER' }, "a user cannot read another's dashboard");
  });
}

t.test(
  'per-tool scopes at /mcp: an API key with subscriptions:read reads the ledger, and is refused list_trades and close_trade with insufficient_scope',
  async (t) => {
    const user = await signIn(app, 'e2e-scopes@example.test');
    const created = await api(app, 'POST', '/api/api-keys', { token: user.accessToken, body: { name: 'mcp-reads', scopes: ['subscriptions:read'] } });
    t.equal(created.status, 201, JSON.stringify(created.body));
    const { apiKey, secretKey } = created.body.data as { apiKey: string; secretKey: string };
    const post = async (id: number, method: string, params: unknown, sessionId?: string) => {
      const raw = JSON.stringify({ jsonrpc: '2.0', id, method, params });
      const timestamp = String(Date.now());
      const signature = requestSignature(secretKey, { timestamp, method: 'POST', path: '/mcp', body: raw });
      return fetch(`${app.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          'x-api-key': apiKey,
          'x-timestamp': timestamp,
          'x-signature': signature,
          ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
        },
        body: raw,
      });
    };
    const opened = await post(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'scopes', version: '1' } });
    t.equal(opened.status, 200);
    const sessionId = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const ledger = await post(2, 'tools/call', { name: 'get_pool_ledger', arguments: { agentId: 'never-followed' } }, sessionId);
    t.equal(ledger.status, 200, 'the scope suffices: the tool answers (here its refusal)');
    t.match(await ledger.text(), /SUBSCRIPTION_NOT_FOUND/);
    for (const [name, scope] of [
      ['list_trades', 'trades:read'],
      ['close_trade', 'trades:write'],
      ['list_my_agents', 'developer:read'],
    ] as const) {
      const res = await post(3, 'tools/call', { name, arguments: name === 'close_trade' ? { id: 'x' } : {} }, sessionId);
      t.equal(res.status, 403, `${name}: 403`);
      t.match(res.headers.get('www-authenticate'), new RegExp(`error="insufficient_scope".*scope="${scope}"`), `${name} asks ${scope}`);
      await res.text();
    }
  },
);
