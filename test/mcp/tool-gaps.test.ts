// What the MCP tools offer against REST, through real HTTP with the SDK's v2 client (2026-07-28):
// list_agents filters and pages the marketplace exactly as GET /api/v1/agents does (one query
// schema); wallet_sell of the spend stablecoin is REST's withdrawal to an address, previewed and
// confirmed with a single-use handle, the money leaving the real wallet once (or coming back when
// the chain transfer fails); close_trade previews the close and makes it with the handle.
import t from 'tap';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { tradingUser } from '../api/mcp/trading.ts';

const ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const DEAD_ADDRESS = 'DeadDeadDeadDeadDeadDeadDeadDeadDeadDeadDead';

const app = await startTestApp({
  config: { ADMIN_EMAILS: 'admin@example.test' },
  // the simulated chain fails a transfer to this address, as a chain would let it expire
  failSwap: (request) => (request.destination === DEAD_ADDRESS ? 'TRANSACTION_EXPIRED' : null),
});
t.teardown(() => app.close());
const admin = await signIn(app, 'admin@example.test');
const dev = await signIn(app, 'gaps-dev@example.test');

interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, any>;
  content?: unknown;
}

async function connect(user: SignedIn) {
  const client = new Client({ name: 'gaps', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${user.accessToken}` } } }),
  );
  t.teardown(() => client.close());
  return (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<ToolResult>;
}

const errorOf = (result: ToolResult) => JSON.parse((result.content as Array<{ text: string }>)[0]!.text);

t.test('list_agents takes the marketplace route’s filters and paging, and answers what GET /api/v1/agents answers', async (t) => {
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  await followableAgent(app, tokens, { name: 'Gaps spot beta', venue: 'SPOT_VENUE' });
  await followableAgent(app, tokens, { name: 'Gaps spot live', venue: 'SPOT_VENUE' }, { live: true });
  await followableAgent(app, tokens, { name: 'Gaps perp live', venue: 'PERP_VENUE', maxLeverage: 5 }, { live: true });
  const user = await signIn(app, 'gaps-browser@example.test');
  const call = await connect(user);
  const queries = [
    {},
    { venue: 'PERP_VENUE' },
    { venue: 'SPOT_VENUE', betaStatus: 'live' },
    { betaStatus: 'beta' },
    { page: 2, limit: 1 },
    { venue: 'SPOT_VENUE', page: 1, limit: 1 },
  ];
  for (const query of queries) {
    const listed = await call('list_agents', query);
    t.notOk(listed.isError, JSON.stringify(query));
    const rest = await api(app, 'GET', `/api/v1/agents?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`);
    t.equal(rest.status, 200);
    const { items, pagination } = rest.body.data;
    t.same(listed.structuredContent!.agents, items, `${JSON.stringify(query)}: the same agents as REST`);
    t.match(listed.structuredContent, { total: pagination.total, page: pagination.page, limit: pagination.limit, hasNextPage: pagination.hasNextPage });
  }
  const perp = (await call('list_agents', { venue: 'PERP_VENUE' })).structuredContent!.agents as Array<{ venue: string }>;
  t.ok(perp.length > 0 && perp.every((a) => a.venue === 'PERP_VENUE'), 'the venue filter applies');
  const beta = (await call('list_agents', { betaStatus: 'beta' })).structuredContent!.agents as Array<{ name: string }>;
  t.same(
    beta.map((a) => a.name),
    ['Gaps spot beta'],
    'the status filter applies',
  );
  const bad = await call('list_agents', { venue: 'NO_SUCH_VENUE' });
  t.equal(bad.isError, true, 'a venue outside the route’s enum is refused');
});

t.test('wallet_sell of the spend stablecoin withdraws real cash to an address: previewed, confirmed once, refused as REST refuses it', async (t) => {
  const user = await signIn(app, 'gaps-withdraw@example.test');
  t.equal((await api(app, 'POST', `/api/admin/wallets/${user.userId}/deposit`, { token: admin.accessToken, body: { amountUsd: 500 } })).status, 200);
  const call = await connect(user);
  const realUsd = async () =>
    ((await call('get_wallet', {})).structuredContent!.wallets as Array<{ walletContext: string; balanceUsd: number }>).find((w) => w.walletContext === 'real')!
      .balanceUsd;
  t.equal(await realUsd(), 500);

  const refusals = [
    [{ amount: 10, walletContext: 'real' }, 'VALIDATION_FAILED', 'no destination'],
    [{ amount: 10, walletContext: 'real', destination: 'not-an-address' }, 'VALIDATION_FAILED', 'a malformed destination'],
    [{ amount: 10, destination: ADDRESS }, 'VALIDATION_FAILED', "the virtual context (the user's current one) holds paper money"],
    [{ amount: 500.01, walletContext: 'real', destination: ADDRESS }, 'INSUFFICIENT_FUNDS', 'more than the balance'],
  ] as const;
  for (const [args, reason, what] of refusals) {
    const previewed = await call('wallet_sell', args);
    t.notOk(previewed.isError, what);
    t.match(previewed.structuredContent, { status: 'preview', confirmation: null, preview: { refusal: { reason } } }, what);
  }

  const args = { amount: 120.5, walletContext: 'real', destination: ADDRESS };
  const previewed = await call('wallet_sell', args);
  t.match(previewed.structuredContent, {
    status: 'preview',
    preview: {
      walletContext: 'real',
      moves: [{ from: 'real wallet', to: `address ${ADDRESS}`, amountUsd: 120.5 }],
      after: { walletBalanceUsd: 379.5 },
      refusal: null,
    },
    confirmation: { handle: String },
  });
  t.equal(await realUsd(), 500, 'the preview sent nothing');
  const handle = previewed.structuredContent!.confirmation.handle as string;
  t.match(
    errorOf(await call('wallet_sell', { ...args, amount: 120, confirmationHandle: handle })),
    { reason: 'CONFIRMATION_MISMATCH' },
    'the handle confirms the previewed amount only',
  );

  const sent = await call('wallet_sell', { ...args, confirmationHandle: handle });
  t.notOk(sent.isError, JSON.stringify(sent.content));
  t.match(sent.structuredContent, {
    status: 'done',
    result: {
      message: `Sent 120.5 USDC to ${ADDRESS}`,
      side: 'withdraw',
      amount: 120.5,
      amountUsd: 120.5,
      tokenSymbol: 'USDC',
      destination: ADDRESS,
      walletContext: 'real',
      transactionId: /^simtx-/,
    },
  });
  t.equal(await realUsd(), 379.5, 'the money left the real wallet');
  t.match(errorOf(await call('wallet_sell', { ...args, confirmationHandle: handle })), { reason: 'CONFIRMATION_INVALID' }, 'a handle sends once');
  t.equal(await realUsd(), 379.5, 'and nothing more left');

  const dead = { amount: 50, walletContext: 'real', destination: DEAD_ADDRESS };
  const deadPreview = await call('wallet_sell', dead);
  t.match(
    deadPreview.structuredContent,
    { preview: { refusal: null }, confirmation: { handle: String } },
    'the chain’s refusal is not known before the transfer',
  );
  const failed = await call('wallet_sell', { ...dead, confirmationHandle: deadPreview.structuredContent!.confirmation.handle });
  t.equal(failed.isError, true);
  t.match(errorOf(failed), { reason: 'SWAP_FAILED', swapReason: 'TRANSACTION_EXPIRED' }, 'the failed chain transfer is the REST refusal');
  t.equal(await realUsd(), 379.5, 'and its money came back');
});

t.test('close_trade is previewed and closed with the handle, through the client', async (t) => {
  const { user, agentId, tradeId, setPrice } = await tradingUser(app, 'gaps-close');
  await setPrice(55_000);
  const call = await connect(user);
  const previewed = await call('close_trade', { id: tradeId });
  t.match(previewed.structuredContent, {
    status: 'preview',
    preview: { moves: [{ from: `trade ${tradeId}`, to: `pool of agent ${agentId}` }], refusal: null },
    confirmation: { handle: String },
  });
  t.ok(previewed.structuredContent!.preview.realizedPnlUsd > 0, 'a rise of a long shows a gain');
  const trades = async () => (await call('list_trades', {})).structuredContent!.items as Array<{ id: string; status: string }>;
  t.equal((await trades()).find((i) => i.id === tradeId)?.status, 'open', 'the preview closed nothing');
  const closed = await call('close_trade', { id: tradeId, confirmationHandle: previewed.structuredContent!.confirmation.handle });
  t.match(closed.structuredContent, { status: 'done', result: { trade: { id: tradeId, status: 'closed', closeReason: 'USER' } } });
  t.equal((await trades()).find((i) => i.id === tradeId)?.status, 'closed');
  t.match(
    (await call('close_trade', { id: tradeId })).structuredContent,
    { confirmation: null, preview: { refusal: { reason: 'TRADE_CLOSED' } } },
    'a closed trade has nothing to confirm',
  );
});
