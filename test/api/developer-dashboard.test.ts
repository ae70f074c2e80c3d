// The developer dashboard through real HTTP: GET /api/v1/developers/agents/{id}/subscribers
// (anonymized follower pools with the fees each settled for the developer) and the trading figures
// in performanceStats, after real pools settled fees at a stop and at a confirmed withdrawal, with
// the workers and the simulated venue running.
import t from 'tap';
import { poolId } from '../../domain/pool/state.ts';
import { anonymizedSubscriberId } from '../../infra/anonymize.ts';
import { agentFiguresProjector } from '../../projections/agent-figures/projector.ts';
import { rebuild } from '../../projections/rebuild.ts';
import { api, dispatch, startTestApp, type TestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { until } from '../support/until.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';

const SUBS = '/api/v1/users/me/subscriptions';
const M = 1_000_000;

/**
 * A trade of the agent in one pool, entered with the pool's commands: opened with its margin, and
 * closed with its realized PnL when one is given. The one place these tests shape those commands.
 */
async function trade(app: TestApp, pool: string, tradeId: string, marginMicro: number, realizedPnlMicro?: number): Promise<void> {
  await dispatch(app, 'RecordPoolFact', { poolId: pool, fact: { type: 'OpenTrade', data: oneTrade(tradeId, marginMicro) } });
  if (realizedPnlMicro !== undefined) {
    await dispatch(app, 'RecordPoolFact', { poolId: pool, fact: { type: 'CloseTrade', data: { tradeId, realizedPnlMicro } } });
  }
}

t.test('the developer dashboard: subscribers and performance figures', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test', VENUE_SIM_CHAIN_MS: '0', RECONCILIATION_INTERVAL_MS: '100' } });
  t.teardown(() => app.close());
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await api(app, method, path, { token, body });
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dash-dev@example.test');
  const stranger = await signIn(app, 'dash-stranger@example.test');
  const [u1, u2] = [await signIn(app, 'dash-u1@example.test'), await signIn(app, 'dash-u2@example.test')] as [SignedIn, SignedIn];
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  const feeAgent = await followableAgent(app, tokens, { name: 'Fee taker', venue: 'SPOT_VENUE', successFeePercent: 20 }, { live: true });
  const monthlyAgent = await followableAgent(app, tokens, { name: 'Monthly', venue: 'SPOT_VENUE', monthlyPrice: 9.99, successFeePercent: 10 }, { live: true });
  const freeAgent = await followableAgent(app, tokens, { name: 'Free', venue: 'SPOT_VENUE' }, { live: true });
  for (const u of [u1, u2]) await call('POST', `/api/admin/wallets/${u.userId}/deposit`, admin.accessToken, { amountUsd: 1000 });

  const subscribers = (agentId: string, query = '', token = dev.accessToken) =>
    api(app, 'GET', `/api/v1/developers/agents/${agentId}/subscribers${query}`, { token });
  const realRecord = async (u: SignedIn, agentId: string) =>
    ((await call('GET', `${SUBS}?walletContext=real`, u.accessToken)) as any[]).find((s) => s.agent === agentId);
  const realBalance = async (u: SignedIn) =>
    ((await call('GET', '/api/v1/wallet', u.accessToken)).wallets as any[]).find((w) => w.walletContext === 'real').balanceUsd as number;
  /** A real follow, once the venue confirmed its capital. */
  const followReal = async (u: SignedIn, agentId: string, usd: number) => {
    await call('POST', SUBS, u.accessToken, { agentId, walletContext: 'real', allocationAmountUsd: usd });
    await until('the real add confirmed', async () => (await realRecord(u, agentId))?.allocatedUsd === usd);
  };

  const u1Real = poolId(u1.userId, feeAgent, 'real');
  const fees = async (agentId: string, walletContext: string) =>
    ((await subscribers(agentId)).body.data.items as Array<{ walletContext: string; totalFeesEarnedUsd: number }>).find(
      (i) => i.walletContext === walletContext,
    )?.totalFeesEarnedUsd;
  // First opening: +50 USD realized; the 20 % fee (10 USD, 8 to the creator) is settled when a
  // withdrawal confirms; then a loss, and a stop that owes no more fee. (The simulated venue moves
  // no trade PnL, so the pool's trades net to a loss here for its payout to be paid in full.)
  await followReal(u1, feeAgent, 300);
  await trade(app, u1Real, 'u1-r-1', 100 * M, 50 * M);
  await call('POST', `${SUBS}/${feeAgent}/allocation/withdraw`, u1.accessToken, { amountUsd: 20, walletContext: 'real' });
  await until('the fee of the first withdrawal', async () => (await fees(feeAgent, 'real')) === 8);
  await trade(app, u1Real, 'u1-r-2', 100 * M, -60 * M);
  await call('DELETE', `${SUBS}/${feeAgent}?walletContext=real`, u1.accessToken);
  await until('the stop paid out', async () => (await realBalance(u1)) === 980);
  // Second opening: +25 USD, a fee of 5 settled when its withdrawal confirms (4 to the creator).
  await followReal(u1, feeAgent, 100);
  await trade(app, u1Real, 'u1-r-3', 50 * M, 25 * M);
  await call('POST', `${SUBS}/${feeAgent}/allocation/withdraw`, u1.accessToken, { amountUsd: 10, walletContext: 'real' });
  await until('the fee of the second opening', async () => (await fees(feeAgent, 'real')) === 12);
  // Virtual pools show fees but settle none.
  await call('POST', SUBS, u1.accessToken, { agentId: feeAgent, walletContext: 'virtual', allocationAmountUsd: 100 });
  await trade(app, poolId(u1.userId, feeAgent, 'virtual'), 'u1-v-1', 20 * M, 100 * M);
  // A loss settles nothing; an open trade is no closed trade.
  await followReal(u2, feeAgent, 200);
  await trade(app, poolId(u2.userId, feeAgent, 'real'), 'u2-r-1', 40 * M, -10 * M);
  await trade(app, poolId(u2.userId, feeAgent, 'real'), 'u2-r-2', 20 * M);
  await call('POST', SUBS, u1.accessToken, { agentId: monthlyAgent, walletContext: 'virtual', allocationAmountUsd: 50 });
  await call('POST', SUBS, u2.accessToken, { agentId: freeAgent, walletContext: 'virtual', allocationAmountUsd: 10 });
  for (const u of [u1, u2]) await call('GET', SUBS, u.accessToken); // a follower's read waits for their writes to be projected

  const u1Id = anonymizedSubscriberId(app.deps.config.JWT_SECRET, feeAgent, u1.userId);
  const u2Id = anonymizedSubscriberId(app.deps.config.JWT_SECRET, feeAgent, u2.userId);

  await t.test('one item per follower pool, latest opening first, anonymized, with the creator’s fees', async (t) => {
    const res = await subscribers(feeAgent);
    t.equal(res.status, 200, JSON.stringify(res.body));
    const { items, pagination } = res.body.data;
    const success = { pricingModel: 'success_fee', monthlyPrice: 0, successFeePercent: 20, status: 'active' };
    t.same(
      items.map(({ subscribedAt: _s, ...item }: Record<string, unknown>) => item),
      [
        { anonymizedSubscriberId: u2Id, walletContext: 'real', claimableFeesUsd: 0, totalFeesEarnedUsd: 0, totalFeesClaimedUsd: 0, ...success },
        { anonymizedSubscriberId: u1Id, walletContext: 'virtual', claimableFeesUsd: 0, totalFeesEarnedUsd: 0, totalFeesClaimedUsd: 0, ...success },
        // 8 in the first opening, 4 in the second: every opening of the pool counts
        { anonymizedSubscriberId: u1Id, walletContext: 'real', claimableFeesUsd: 12, totalFeesEarnedUsd: 12, totalFeesClaimedUsd: 0, ...success },
      ],
    );
    t.same(pagination, { total: 3, limit: 20, page: 1, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    t.equal(items[2].subscribedAt, (await realRecord(u1, feeAgent)).subscribedAt, 'subscribedAt: the pool’s latest opening');
    t.match(u1Id, /^[A-Za-z0-9_-]{22}$/);
    t.not(u1Id, u2Id);
    const text = JSON.stringify(res.body);
    for (const hidden of [u1.userId, u2.userId, 'userId', 'poolId', 'user_id']) t.notOk(text.includes(hidden), `no ${hidden} in the answer`);
  });

  await t.test('a stopped pool stays listed with its fees, marked stopped', async (t) => {
    await call('DELETE', `${SUBS}/${feeAgent}?walletContext=virtual`, u1.accessToken);
    await call('GET', SUBS, u1.accessToken); // the follower's read waits for the stop to be projected
    const items = (await subscribers(feeAgent)).body.data.items;
    t.same(
      items.map((i: { walletContext: string; status: string }) => `${i.walletContext}:${i.status}`),
      ['real:active', 'virtual:stopped', 'real:active'],
    );
  });

  await t.test('pages', async (t) => {
    const res = await subscribers(feeAgent, '?page=2&limit=2');
    t.equal(res.status, 200);
    t.same(
      res.body.data.items.map((i: { anonymizedSubscriberId: string; walletContext: string }) => [i.anonymizedSubscriberId, i.walletContext]),
      [[u1Id, 'real']],
    );
    t.same(res.body.data.pagination, { total: 3, limit: 2, page: 2, totalPages: 2, hasNextPage: false, hasPreviousPage: true });
    for (const bad of ['?limit=0', '?limit=101', '?page=0']) t.equal((await subscribers(feeAgent, bad)).status, 400, bad);
  });

  await t.test('the pricing model: subscription with a monthly price, free with neither fee', async (t) => {
    const [monthly] = (await subscribers(monthlyAgent)).body.data.items;
    t.match(monthly, { pricingModel: 'subscription', monthlyPrice: 9.99, successFeePercent: 10, walletContext: 'virtual', status: 'active' });
    t.equal(monthly.anonymizedSubscriberId, anonymizedSubscriberId(app.deps.config.JWT_SECRET, monthlyAgent, u1.userId));
    t.not(monthly.anonymizedSubscriberId, u1Id, 'the same user cannot be linked across the developer’s agents');
    const [free] = (await subscribers(freeAgent)).body.data.items;
    t.match(free, { pricingModel: 'free', monthlyPrice: 0, successFeePercent: 0 });
  });

  await t.test('only the agent’s developer: 401 without a token, 403 for anyone else, 404 for an unknown agent', async (t) => {
    const anonymous = await api(app, 'GET', `/api/v1/developers/agents/${feeAgent}/subscribers`);
    t.equal(anonymous.status, 401);
    for (const other of [stranger, admin, u1]) {
      const res = await subscribers(feeAgent, '', other.accessToken);
      t.equal(res.status, 403);
      t.match(res.body, { success: false, error: { code: 'FORBIDDEN', reason: 'NOT_AGENT_OWNER' } });
    }
    const unknown = await subscribers('00000000-0000-4000-8000-000000000000');
    t.equal(unknown.status, 404);
    t.match(unknown.body.error, { code: 'NOT_FOUND', reason: 'AGENT_NOT_FOUND' });
  });

  await t.test('performanceStats: closed trades of every follower pool, wins, realized PnL, return on the capital put in', async (t) => {
    // 5 closed trades (+50, −60, +25, +100, −10; the open one is not), 3 won; 105 USD realized
    // over 300 + 100 + 100 + 200 USD put in (withdrawals and the stop's payout do not lower it).
    const figures = { trades: 5, winRate: 0.6, realizedPnlUsd: 105, returnPercent: 15 };
    const stats = (record: { performanceStats: unknown }) => record.performanceStats;
    t.same(stats(await call('GET', `/api/v1/agents/${feeAgent}`, u1.accessToken)), { betaSeatsTaken: 0, ...figures }, 'the public record');
    const listed = (await call('GET', '/api/v1/agents', u2.accessToken)).items as Array<{ id: string; performanceStats: unknown }>;
    t.same(stats(listed.find((a) => a.id === feeAgent)!), { betaSeatsTaken: 0, ...figures }, 'the public listing');
    t.same(
      stats(listed.find((a) => a.id === monthlyAgent)!),
      { betaSeatsTaken: 0, trades: 0, winRate: 0, realizedPnlUsd: 0, returnPercent: 0 },
      'no trade yet',
    );
    const mine = (await call('GET', '/api/v1/developers/agents', dev.accessToken)).items as Array<{ id: string; performanceStats: unknown }>;
    t.same(stats(mine.find((a) => a.id === feeAgent)!), { betaSeatsTaken: 0, ...figures }, 'the developer’s own listing');
    const edited = await call('PATCH', `/api/v1/developers/agents/${feeAgent}`, dev.accessToken, { signalExecutionDefaults: { leverageMax: 2 } });
    t.same(stats(edited), { betaSeatsTaken: 0, ...figures }, 'the developer agent record after an edit');
  });

  await t.test('the agent-figures read model rebuilds row for row', async (t) => {
    const snapshot = async () => ({
      subscribers: (await app.deps.pool.query('SELECT * FROM agent_subscribers ORDER BY pool_id')).rows,
      performance: (await app.deps.pool.query('SELECT * FROM agent_performance ORDER BY agent_id')).rows,
    });
    const before = await snapshot();
    t.equal(before.subscribers.length, 5);
    t.equal(before.performance.length, 3);
    await rebuild(app.deps.store, app.deps.pool, agentFiguresProjector);
    t.same(await snapshot(), before);
  });
});
