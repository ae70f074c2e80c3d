import type { Test } from 'tap';
import { poolId } from '../../../domain/pool/state.ts';
import { signWebhookBody } from '../../../infra/signing/webhook.ts';
import { api, startTestApp, type TestApp } from '../../support/app.ts';
import { signIn, TEST_USER_AGENT, type SignedIn } from '../../support/auth.ts';
import { until } from '../../support/until.ts';
import { ADMIN, SUBS, rebuildEqualsLive, type People } from './support.ts';

/**
 * Agent trades from signals: a signed open executes in the follower's pool (margin locked), the
 * price watcher marks it, a text follow-up closes it (PnL realized); the trades list, the inbox and
 * the subscription show it; a rebuild of every read model equals the live ones.
 */
export async function signalFlow(t: Test, eventStore: 'postgres' | 'esdb') {
  const app = await startTestApp({ eventStore, config: { ADMIN_EMAILS: ADMIN, PRICE_WATCH_INTERVAL_MS: '200' } });
  t.teardown(() => app.close());
  const developer = await signIn(app, 'signal-dev@example.test');
  const admin = await signIn(app, ADMIN);
  const user = await signIn(app, 'signal-follower@example.test');
  await keptRefreshToken(t, app, user);
  const { agentId, secret } = await listAndFollowSignalAgent(t, app, { developer, admin, user });
  await api(app, 'GET', SUBS, { token: user.accessToken });
  await tradeFromSignals(t, app, { developer, admin, user }, { agentId, secret });
  await walletFlow(t, app, user, admin);

  await rebuildEqualsLive(t, app);
}

/** A client that keeps its sign-in refresh token, as the API specification allows, refreshes with it again and again; another user agent is refused. */
async function keptRefreshToken(t: Test, app: TestApp, user: SignedIn) {
  const refresh = (userAgent: string) =>
    api(app, 'POST', '/api/auth/refresh', { headers: { 'user-agent': userAgent }, body: { refreshToken: user.refreshToken } });
  for (let n = 1; n <= 3; n++) {
    const refreshed = await refresh(TEST_USER_AGENT);
    t.equal(refreshed.status, 200, `refresh ${n} with the sign-in's refresh token`);
    t.equal(refreshed.body.data.tokens.refreshToken, user.refreshToken, 'the same refresh token comes back');
  }
  t.equal((await refresh('another-agent/2.0')).status, 401, 'the token from another user agent is refused');
  t.equal((await refresh(TEST_USER_AGENT)).status, 200, 'and the session goes on');
}

/** A perp-venue agent listed and approved, ETH priced at 3000, and the user following it with 500 USD. */
async function listAndFollowSignalAgent(t: Test, app: TestApp, { developer, admin, user }: People) {
  const listed = await api(app, 'POST', '/api/v1/developers/agents', {
    token: developer.accessToken,
    body: { name: 'Signal flow', venue: 'PERP_VENUE', maxLeverage: 5, successFeePercent: 10, minTradeUsd: 1 },
  });
  t.equal(listed.status, 201);
  const agentId = listed.body.data.id as string;
  const secret = listed.body.data.inboundWebhookSigningSecretReveal as string;
  t.equal((await api(app, 'POST', `/api/admin/developer-agents/${agentId}/approve`, { token: admin.accessToken, body: {} })).status, 200);
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { ETH: 3000 } } })).status, 200);
  t.equal((await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, allocationAmountUsd: 500 } })).status, 200);
  return { agentId, secret };
}

/** A signed open, a mark by the price watcher, a text close; the pool, the trades list and the inbox show each. */
async function tradeFromSignals(t: Test, app: TestApp, { developer, admin, user }: People, { agentId, secret }: { agentId: string; secret: string }) {
  const deliver = (body: unknown) => {
    const signed = signWebhookBody({ secret, body, timestampMs: Date.now() });
    return api(app, 'POST', `/api/v1/signals/${agentId}`, {
      body,
      headers: { 'x-svc-timestamp': signed.timestampHeader, 'x-svc-signature': signed.signatureHeader },
    });
  };
  const opened = await deliver({ signalId: 'eth-1', action: 'open', side: 'long', token: 'ETH', leverage: 3, sizeUsd: 100, stopLoss: 2800 });
  t.equal(opened.status, 200, JSON.stringify(opened.body));
  t.match(opened.body.data, { outcome: 'executed', executionResults: [{ executionResult: { status: 'executed' } }] });
  const pool = poolId(user.userId, agentId, 'virtual');
  const row = async () => (await api(app, 'GET', SUBS, { token: user.accessToken })).body.data.find((p: { agent: string }) => p.agent === agentId);
  // The webhook answers once the pools decided; the follower's views follow within the projection lag.
  await until('the pool to show the margin', async () => (await row()).lockedInPositionsUsd > 0);
  t.match(await row(), { lockedInPositionsUsd: 100, allocationBalanceAudit: { lockedMarginUsd: 100 } }, 'the margin is locked in the pool');
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { ETH: 3150 } } })).status, 200);
  await until('the price watcher to mark the pool up', async () => (await row()).allocationBalanceAudit.unrealizedPnlUsd > 0);

  const closed = await deliver({ signalId: 'eth-2', text: 'ETH long: close all, +5% 🎯' });
  t.equal(closed.status, 200, JSON.stringify(closed.body));
  t.equal(closed.body.data.outcome, 'executed', JSON.stringify(closed.body.data));
  await until('the pool to release the margin', async () => (await row()).allocationBalanceAudit.lockedMarginUsd === 0);
  const after = await row();
  t.equal(after.allocationBalanceAudit.lockedMarginUsd, 0, 'the margin is released');
  t.ok(after.allocationBalanceAudit.realizedPnlUsd > 0, `the profit is realized (${after.allocationBalanceAudit.realizedPnlUsd} USD)`);
  await until(
    'the trade to be listed closed',
    async () => (await api(app, 'GET', '/api/v1/trades?status=closed', { token: user.accessToken })).body.data.items.length > 0,
  );
  const trades = await api(app, 'GET', '/api/v1/trades', { token: user.accessToken });
  t.match(trades.body.data.items, [{ token: 'ETH', status: 'closed', closeReason: 'SIGNAL' }]);
  const inbox = await api(app, 'GET', `/api/v1/developers/agents/${agentId}/signals`, { token: developer.accessToken });
  t.same(
    inbox.body.data.items.map((i: { signalId: string; outcome: string }) => [i.signalId, i.outcome]),
    [
      ['eth-2', 'executed'],
      ['eth-1', 'executed'],
    ],
  );
  t.notOk(JSON.stringify(inbox.body).includes(user.userId), 'the inbox never shows the follower');
  t.ok(pool.length > 0);
}

/**
 * Manual trades: a buy with a stop opens a lot, a sell with an Idempotency-Key reduces it once (its
 * replay answers the same), the stop sells the rest through the price watcher; the wallet shows each.
 */
async function walletFlow(t: Test, app: TestApp, user: SignedIn, admin: SignedIn) {
  const token = user.accessToken;
  const wallet = async () => (await api(app, 'GET', '/api/v1/wallet', { token })).body.data;
  const cashBefore = (await wallet()).wallets[0].balanceUsd;
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { JUP: 2 } } })).status, 200);
  const bought = await api(app, 'POST', '/api/v1/wallet/buy', { token, body: { mint: 'JUP', amountUsd: 100, stopLoss: { price: 1.5 } } });
  t.equal(bought.status, 200, JSON.stringify(bought.body));
  t.match((await wallet()).positions, [{ mint: 'JUP', amount: 50, lots: [{ stopLossUsd: 1.5 }] }]);
  const sell = () => api(app, 'POST', '/api/v1/wallet/sell', { token, body: { mint: 'JUP', amount: 20 }, headers: { 'idempotency-key': 'flow-sell' } });
  const sold = await sell();
  t.equal(sold.status, 200, JSON.stringify(sold.body));
  t.same((await sell()).body, sold.body, 'the replay answers the first sell');
  t.match((await wallet()).positions, [{ mint: 'JUP', amount: 30 }]);
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { JUP: 1.4 } } })).status, 200);
  await until('the stop to sell the lot', async () => (await wallet()).positions.length === 0);
  t.equal((await wallet()).wallets[0].balanceUsd, cashBefore - 100 + 40 + 42, 'bought for 100, sold 20 at 2 and 30 at 1.4');
  t.equal((await api(app, 'POST', '/api/v1/wallet/buy', { token, body: { mint: 'JUP', amountUsd: 14, takeProfit: { percent: 50 } } })).status, 200);
  t.match((await wallet()).positions, [{ mint: 'JUP', amount: 10, lots: [{ takeProfitUsd: 2.1 }] }], 'a lot stays open for the rebuild to compare');
}
