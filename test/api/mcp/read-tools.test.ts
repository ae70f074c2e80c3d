// The read tools of pools, trades and developers: each answers what its REST route answers (the
// envelope's data), needs the route's scopes, is annotated read-only, and refuses as the route
// does. Real PostgreSQL, Redis, dispatcher and signal webhook; tools are called as the transport
// calls them (tool.run with the caller's context).
import t from 'tap';
import { mcpTools } from '../../../api/mcp/tools/index.ts';
import { READ_ONLY } from '../../../api/mcp/tool.ts';
import { api, startTestApp } from '../../support/app.ts';
import type { SignedIn } from '../../support/auth.ts';
import { refusal, toolContext } from '../../support/mcp-tool-context.ts';
import { tradingUser } from './trading.ts';

const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
t.teardown(() => app.close());
const trading = await tradingUser(app, 'reads');
const { dev, user, agentId, signalId, tradeId } = trading;

const toolNamed = (name: string) => {
  const tool = mcpTools.find((m) => m.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
};
/** The tool's answer, checked against its own output schema as the transport's clients check it. */
async function call(name: string, who: SignedIn, input: Record<string, unknown>): Promise<any> {
  const tool = toolNamed(name);
  return tool.output.parse(await tool.run(toolContext(app, who), tool.input.parse(input)));
}
const rest = async (method: string, path: string, who: SignedIn, body?: unknown) => {
  const res = await api(app, method, path, { token: who.accessToken, body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
};

t.test('each read tool: title, description, the REST route scopes, read-only annotations', async (t) => {
  const expected: Record<string, string[]> = {
    get_pool_ledger: ['subscriptions:read'],
    list_trades: ['trades:read'],
    list_my_agents: ['developer:read'],
    get_signal_inbox: ['developer:read'],
    replay_signal: ['developer:write'],
    list_subscribers: ['developer:read'],
  };
  for (const [name, scopes] of Object.entries(expected)) {
    const tool = toolNamed(name);
    t.same(tool.scopes, scopes, `${name}: the route's scopes`);
    t.same(tool.annotations, READ_ONLY, `${name}: read-only`);
    t.ok(tool.title.length > 0 && tool.description.length > 80, `${name}: title and a description for a model`);
  }
});

t.test("get_pool_ledger answers the pool's ledger as GET …/ledger does, and with `at` the pool as it was", async (t) => {
  const path = `/api/v1/users/me/subscriptions/${agentId}/ledger`;
  const ledger = await call('get_pool_ledger', user, { agentId });
  t.same(ledger, await rest('GET', path, user));
  t.ok(ledger.items.length >= 2, 'the follow and the trade');
  t.match(ledger.items[0], { sequence: 1, type: String, time: String });
  t.ok(
    ledger.items.some((item: any) => item.balances?.allocatedUsd === 1000),
    'the running figures show the allocation',
  );

  const at = new Date().toISOString();
  const then = await call('get_pool_ledger', user, { agentId, at, limit: 1 });
  t.same(then, await rest('GET', `${path}?at=${encodeURIComponent(at)}&limit=1`, user));
  t.match(then, { items: [{ sequence: 1 }], pagination: { limit: 1, hasNextPage: true }, subscription: { allocatedUsd: 1000 } });
  const before = await call('get_pool_ledger', user, { agentId, at: '2020-01-01T00:00:00Z' });
  t.match(before, { items: [], subscription: null }, 'before the follow: nothing yet');
  t.equal(await refusal(call('get_pool_ledger', dev, { agentId })), 'SUBSCRIPTION_NOT_FOUND', 'a pool never followed');
  t.throws(() => toolNamed('get_pool_ledger').input.parse({ agentId, at: 'yesterday' }), 'a bad `at` is refused by the input schema');
});

t.test("list_trades answers the caller's trades as GET /api/v1/trades does", async (t) => {
  const open = await call('list_trades', user, { status: 'open' });
  t.same(open, await rest('GET', '/api/v1/trades?status=open', user));
  t.match(open, { items: [{ id: tradeId, token: 'BTC', side: 'long', leverage: 2, marginUsd: 20, status: 'open' }], pagination: { total: 1 } });
  t.match(await call('list_trades', dev, {}), { items: [], pagination: { total: 0 } }, "nobody else's trades");
});

t.test("developer tools: the caller's agents, the signal inbox, a dry-run replay, the subscribers; another's agent refused", async (t) => {
  const agents = await call('list_my_agents', dev, {});
  t.same(agents, await rest('GET', '/api/v1/developers/agents', dev));
  t.match(agents.items, [{ id: agentId, inboundSignalsHttpUrl: `${app.url}/api/v1/signals/${agentId}` }]);
  t.match(await call('list_my_agents', user, {}), { items: [] });

  const inbox = await call('get_signal_inbox', dev, { agentId });
  t.same(inbox, await rest('GET', `/api/v1/developers/agents/${agentId}/signals`, dev));
  t.match(inbox.items, [{ signalId }]);

  const replay = await call('replay_signal', dev, { agentId, signalId });
  t.same(replay, await rest('POST', `/api/v1/developers/agents/${agentId}/signals/${signalId}/replay`, dev, {}));
  t.match(replay, { signalId, dryRun: true, changed: false });
  t.match(await call('list_trades', user, {}), { pagination: { total: 1 } }, 'the replay traded nothing');
  t.equal(await refusal(call('replay_signal', dev, { agentId, signalId: 'no-such-signal' })), 'SIGNAL_NOT_FOUND');

  const subscribers = await call('list_subscribers', dev, { agentId });
  t.same(subscribers, await rest('GET', `/api/v1/developers/agents/${agentId}/subscribers`, dev));
  t.match(subscribers, { items: [{ walletContext: 'virtual', status: 'active' }], pagination: { total: 1 } });
  t.notOk(JSON.stringify(subscribers).includes(user.userId), 'never a user id');

  for (const name of ['get_signal_inbox', 'list_subscribers'])
    t.equal(await refusal(call(name, user, { agentId })), 'NOT_AGENT_OWNER', `${name}: another developer's agent`);
  t.equal(await refusal(call('replay_signal', user, { agentId, signalId })), 'NOT_AGENT_OWNER');
  t.equal(await refusal(call('get_signal_inbox', dev, { agentId: 'no-such-agent' })), 'AGENT_NOT_FOUND');
});
