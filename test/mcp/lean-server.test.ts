// A 2026-07-28 request gets a server with only what it can reach (api/mcp/server.ts `reachable`): a
// tools/call of one of our tools builds that tool alone, a tools/list our tools alone. Shown here:
// which requests get which server, and, over real HTTP, that every answer is the one the whole
// server gives: each read tool, refusals, invalid arguments, an unknown tool, a missing scope and
// the listing, first served lean, then served again after a no-op extra registration (which makes
// every request get the whole server) and compared status and body, exactly.
import t from 'tap';
import { reachable, registerOnEveryServer } from '../../api/mcp/server.ts';
import { mcpTools } from '../../api/mcp/tools/index.ts';
import { callWallet, modernHeaders } from '../../bench/mcp.ts';
import { requestSignature } from '../../infra/api-keys.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

const headers = (method: string, name?: string) => new Headers(modernHeaders(method, name));

t.test('which server a request gets', async (t) => {
  const wallet = mcpTools.find((tool) => tool.name === 'get_wallet')!;
  t.equal(reachable('modern', headers('tools/call', 'get_wallet')), wallet, 'a call of our tool: that tool');
  t.equal(reachable('modern', headers('tools/list')), 'tools', 'a listing: our tools');
  t.equal(reachable('modern', headers('tools/call', 'no_such_tool')), 'all', 'a name that is not ours: the whole server (the SDK answers it)');
  t.equal(reachable('modern', headers('tools/call')), 'all', 'a call without a name header: the whole server');
  for (const method of ['server/discover', 'resources/read', 'prompts/get', 'completion/complete', 'subscriptions/listen']) {
    t.equal(reachable('modern', headers(method)), 'all', method);
  }
  t.equal(reachable('legacy', headers('tools/call', 'get_wallet')), 'all', 'a 2025 request: the whole server');
  t.equal(reachable('modern', undefined), 'all', 'no request information: the whole server');
});

t.test("answers of the lean servers equal the whole server's", async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const user = await signIn(app, 'lean-user@example.test');
  const created = await api(app, 'POST', '/api/api-keys', { token: user.accessToken, body: { name: 'lean', scopes: ['subscriptions:read'] } });
  t.equal(created.status, 201);
  const { apiKey, secretKey } = created.body.data as { apiKey: string; secretKey: string };

  const call = (name: string, args: unknown) => ({ ...callWallet(7), params: { ...callWallet(7).params, name, arguments: args } });
  const bearer = { authorization: `Bearer ${user.accessToken}` };
  const signed = (body: string) => {
    const timestamp = String(Date.now());
    return { 'x-api-key': apiKey, 'x-timestamp': timestamp, 'x-signature': requestSignature(secretKey, { timestamp, method: 'POST', path: '/mcp', body }) };
  };
  const cases: Array<[string, unknown, Record<string, string>, (body: string) => Record<string, string>]> = [
    ['tools/list', { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: callWallet(1).params._meta } }, modernHeaders('tools/list'), () => bearer],
    ...[
      ['list_agents', {}],
      ['get_agent', { id: 'no-such-agent' }],
      ['list_my_pools', {}],
      ['get_pool_ledger', { agentId: 'no-such-agent' }],
      ['list_trades', {}],
      ['get_wallet', {}],
      ['list_my_agents', {}],
      ['get_signal_inbox', { agentId: 'no-such-agent' }],
      ['list_subscribers', { agentId: 'no-such-agent' }],
      ['follow_agent', { agentId: 'no-such-agent', allocationAmountUsd: 10 }],
      ['get_agent', {}],
      ['list_agents', { limit: 'many' }],
      ['no_such_tool', {}],
    ].map(
      ([name, args]) =>
        [
          `tools/call ${name} ${JSON.stringify(args)}`,
          call(name as string, args),
          modernHeaders('tools/call', name as string),
          () => bearer,
        ] as (typeof cases)[number],
    ),
    ['tools/call get_wallet without its scope', call('get_wallet', {}), modernHeaders('tools/call', 'get_wallet'), signed],
  ];

  const answers = async () => {
    const out: Array<{ status: number; body: unknown }> = [];
    for (const [, body, head, auth] of cases) {
      const text = JSON.stringify(body);
      const res = await fetch(`${app.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', ...head, ...auth(text) }, body: text });
      out.push({ status: res.status, body: await res.json() });
    }
    return out;
  };
  const lean = await answers();
  t.ok(
    lean.some((a) => a.status === 403),
    'the missing scope is challenged',
  );
  t.ok(
    lean.some((a) => JSON.stringify(a.body).includes('"isError":true')),
    'a refusal is among the answers',
  );
  registerOnEveryServer(() => {}); // from here on every request gets the whole server
  t.equal(reachable('modern', headers('tools/call', 'get_wallet')), 'all');
  const whole = await answers();
  for (const [i, [label]] of cases.entries()) t.same(lean[i], whole[i], label);
});
