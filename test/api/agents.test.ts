import t from 'tap';
import { agentsProjector } from '../../projections/agents/projector.ts';
import { rebuild } from '../../projections/rebuild.ts';
import { reviewsProjector } from '../../projections/reviews/projector.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { until } from '../support/until.ts';

t.test('followable agents', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');

  const list = async (body: Record<string, unknown>) => {
    const res = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body });
    t.equal(res.status, 201);
    return res.body.data as { id: string; inboundWebhookSigningSecretReveal: string };
  };
  const decide = async (id: string, ...decisions: string[]) => {
    for (const d of decisions) t.equal((await api(app, 'POST', `/api/admin/developer-agents/${id}/${d}`, { token: admin.accessToken, body: {} })).status, 200);
  };

  const pending = await list({ name: 'Pending' });
  const rejected = await list({ name: 'Rejected' });
  await decide(rejected.id, 'reject');
  const beta = await list({
    name: 'Beta perp',
    venue: 'PERP_VENUE',
    maxLeverage: 10,
    maxBetaUsers: 2,
    minAllocationUsd: 100,
    minTradeUsd: 10,
    successFeePercent: 20,
    webhookUrl: 'https://dev.example.test/private-hook',
    signalDetectionRule: { longKeywords: ['SECRET_RULE'] },
  });
  await decide(beta.id, 'approve');
  const live = await list({ name: 'Live spot' });
  await decide(live.id, 'approve', 'promote');

  await t.test('the listing holds beta and live agents only, newest first, without private fields', async (t) => {
    const res = await api(app, 'GET', '/api/v1/agents');
    t.equal(res.status, 200);
    t.same(
      res.body.data.items.map((a: { name: string }) => a.name),
      ['Live spot', 'Beta perp'],
    );
    t.match(res.body.data.items[1], {
      id: beta.id,
      betaStatus: 'beta',
      venue: 'PERP_VENUE',
      maxLeverage: 10,
      maxBetaUsers: 2,
      minAllocationUsd: 100,
      minTradeUsd: 10,
      minPerTradePercent: 0,
      recommendedPerTradePercent: 10,
      maxConcurrentPositions: 10,
      maxEntriesPerTrade: 3,
      successFeePercent: 20,
      monthlyPrice: 0,
      performanceStats: { betaSeatsTaken: 0 },
    });
    const text = JSON.stringify(res.body);
    // The developer's user id is a digest of their email: public, it would confirm the address.
    const secrets = [beta.inboundWebhookSigningSecretReveal, live.inboundWebhookSigningSecretReveal];
    for (const hidden of ['developerId', dev.userId, ...secrets, 'inboundWebhookSigningSecretReveal', 'private-hook', 'SECRET_RULE', 'inboundSignalsHttpUrl']) {
      t.notOk(text.includes(hidden), `no ${hidden.slice(0, 20)} in the public listing`);
    }
    t.match(res.body.data.pagination, { total: 2, page: 1, totalPages: 1 });
  });

  await t.test('the listing is paginated and can be filtered', async (t) => {
    const page2 = await api(app, 'GET', '/api/v1/agents?limit=1&page=2');
    t.same(
      page2.body.data.items.map((a: { id: string }) => a.id),
      [beta.id],
    );
    t.same(page2.body.data.pagination, { total: 2, limit: 1, page: 2, totalPages: 2, hasNextPage: false, hasPreviousPage: true });
    const perp = await api(app, 'GET', '/api/v1/agents?venue=PERP_VENUE');
    t.same(
      perp.body.data.items.map((a: { id: string }) => a.id),
      [beta.id],
    );
    const liveOnly = await api(app, 'GET', '/api/v1/agents?betaStatus=live');
    t.same(
      liveOnly.body.data.items.map((a: { id: string }) => a.id),
      [live.id],
    );
    t.equal((await api(app, 'GET', '/api/v1/agents?betaStatus=pending-review')).status, 400, 'pending agents cannot be asked for');
    t.equal((await api(app, 'GET', '/api/v1/agents?limit=101')).status, 400);
  });

  await t.test('one followable agent by id; 404 when unknown or not followable', async (t) => {
    const res = await api(app, 'GET', `/api/v1/agents/${live.id}`);
    t.equal(res.status, 200);
    t.match(res.body.data, { id: live.id, betaStatus: 'live', venue: 'SPOT_VENUE' });
    for (const hidden of [live.inboundWebhookSigningSecretReveal, 'developerId', dev.userId]) t.notOk(JSON.stringify(res.body).includes(hidden));
    for (const id of [pending.id, rejected.id, 'no-such-agent']) {
      const missing = await api(app, 'GET', `/api/v1/agents/${id}`);
      t.equal(missing.status, 404);
      t.equal(missing.body.error.code, 'NOT_FOUND');
    }
  });

  await t.test('beta seats: taken once per user, counted, refused when full', async (t) => {
    const [first, second, third] = await Promise.all(['seat-1', 'seat-2', 'seat-3'].map((n) => signIn(app, `${n}@example.test`)));
    const follow = (user: { accessToken: string }, agentId: string) =>
      api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } });
    t.equal((await follow(first!, beta.id)).status, 200);
    t.equal((await follow(first!, beta.id)).status, 200, 'the same user again takes no second seat');
    t.equal((await follow(second!, beta.id)).status, 200);
    // A public read waits for no one's writes: the count shows the follows once projected.
    const seats = async () => (await api(app, 'GET', `/api/v1/agents/${beta.id}`)).body.data.performanceStats.betaSeatsTaken as number;
    await until('both seats counted', async () => (await seats()) === 2);

    const full = await follow(third!, beta.id);
    t.equal(full.status, 409, 'a third user finds the beta full');
    t.match(full.body.error, { code: 'CONFLICT', reason: 'BETA_FULL' });
    t.equal((await follow(third!, live.id)).status, 200, 'a live agent has no seats');
    const notFollowable = await follow(third!, pending.id);
    t.match(notFollowable.body.error, { code: 'CONFLICT', reason: 'AGENT_NOT_FOLLOWABLE' }, 'a pending agent cannot be followed');
    t.same(
      (await api(app, 'GET', `/api/v1/agents/${beta.id}`)).body.data.performanceStats,
      { betaSeatsTaken: 2, trades: 0, winRate: 0, realizedPnlUsd: 0, returnPercent: 0 },
      'the refused follow kept no seat',
    );
  });

  await t.test('the agent and review read models rebuild row for row', async (t) => {
    const snapshot = async () => ({
      agents: (await app.deps.pool.query('SELECT * FROM agent_records ORDER BY id')).rows,
      reviews: (await app.deps.pool.query('SELECT * FROM agent_reviews ORDER BY id')).rows,
    });
    const before = await snapshot();
    t.equal(before.agents.length, 4);
    t.equal(before.reviews.length, 4);
    await rebuild(app.deps.store, app.deps.pool, agentsProjector);
    await rebuild(app.deps.store, app.deps.pool, reviewsProjector);
    t.same(await snapshot(), before);
  });
});
