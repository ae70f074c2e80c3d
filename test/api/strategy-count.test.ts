// The subscription action result's strategyCount: how many agents the caller follows in the
// action's wallet context once it is done (docs/decisions.md, "Subscriptions: strategyCount"),
// through every action that answers it: follow, follow again, add, withdraw, stop following.
import t, { type Test } from 'tap';
import { api, dispatch, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { committedLog } from '../support/log.ts';
import { createStrategyCounts } from '../../projections/subscriptions/strategy-counts.ts';

const PATH = '/api/v1/users/me/subscriptions';
const agentBody = (name: string) => ({
  name,
  successFeePercent: 20,
  venue: 'SPOT_VENUE',
  minAllocationUsd: 10,
  minTradeUsd: 5,
  minPerTradePercent: 2,
  recommendedPerTradePercent: 10,
  maxConcurrentPositions: 4,
  maxEntriesPerTrade: 2,
});

/** An app with three followable agents and the signed-in `email`, closed when the test ends. */
async function setting(t: Test, email: string) {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  const user = await signIn(app, email);
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  const agents = [
    await followableAgent(app, tokens, agentBody('Alpha')),
    await followableAgent(app, tokens, agentBody('Beta')),
    await followableAgent(app, tokens, agentBody('Gamma')),
  ] as const;
  return { app, admin, user, agents };
}

t.test('strategyCount counts the agents the caller follows in the wallet context after each action', async (t) => {
  const { app, admin, user, agents } = await setting(t, 'counter@example.test');
  const [alpha, beta, gamma] = agents;
  const other = await signIn(app, 'someone-else@example.test');
  const count = async (method: string, path: string, body?: Record<string, unknown>, token = user.accessToken) => {
    const res = await api(app, method, path, { token, ...(body ? { body } : {}) });
    t.equal(res.status, 200, `${method} ${path}: ${JSON.stringify(res.body.error ?? '')}`);
    return res.body.data.strategyCount as number;
  };
  const follow = (agentId: string, extra: Record<string, unknown> = {}, token = user.accessToken) =>
    count('POST', PATH, { agentId, allocationMode: 'USD_AMOUNT', allocationAmountUsd: 100, ...extra }, token);

  t.equal(await follow(alpha), 1, 'the first follow');
  t.equal(await follow(beta), 2, 'a second agent, answered at once after the first');
  t.equal(await follow(alpha), 2, 'following again updates the same subscription');
  t.equal(await follow(gamma, {}, other.accessToken), 1, "another user's follows are theirs");
  t.equal(await count('POST', `${PATH}/${alpha}/allocation/add`, { amountUsd: 5 }), 2, 'add');
  t.equal(await count('POST', `${PATH}/${alpha}/allocation/withdraw`, { amountUsd: 5 }), 2, 'withdraw');

  t.equal((await api(app, 'POST', `/api/admin/wallets/${user.userId}/deposit`, { token: admin.accessToken, body: { amountUsd: 500 } })).status, 200);
  t.equal(await follow(gamma, { walletContext: 'real' }), 1, 'the real context counts apart from the virtual one');

  t.equal(await count('DELETE', `${PATH}/${beta}`), 1, 'stopping leaves the others');
  t.equal(await count('DELETE', `${PATH}/${alpha}`), 0, 'nothing followed any more in the virtual context');
  t.equal(await follow(beta), 1, 'following again after stopping');
});

t.test('a remembered count follows changes made outside the routes, and a warm user costs no query', async (t) => {
  const { app, user, agents } = await setting(t, 'remembered@example.test');
  const [alpha, beta, gamma] = agents;
  let loads = 0;
  const query = app.deps.pool.query.bind(app.deps.pool) as (...args: unknown[]) => Promise<unknown>;
  (app.deps.pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
    if ((args[0] as { name?: string })?.name === 'followed-agents-of-user') loads++;
    return query(...args);
  };
  t.teardown(() => {
    (app.deps.pool as unknown as { query: unknown }).query = query;
  });
  const count = async (path: string, body: Record<string, unknown>) => {
    const res = await api(app, 'POST', path, { token: user.accessToken, body });
    t.equal(res.status, 200, `${path}: ${JSON.stringify(res.body.error ?? '')}`);
    return res.body.data.strategyCount as number;
  };
  const follow = (agentId: string) => count(PATH, { agentId, allocationMode: 'USD_AMOUNT', allocationAmountUsd: 100 });
  const add = (agentId: string) => count(`${PATH}/${agentId}/allocation/add`, { amountUsd: 1 });

  t.equal(await follow(alpha), 1);
  t.equal(await follow(beta), 2);
  const before = loads;
  t.equal(await add(alpha), 2, 'add');
  t.equal(await add(beta), 2, 'add again');
  t.equal(loads, before, 'a user remembered needs no query for the count');

  const input = { agentId: gamma, allocationMode: 'USD_AMOUNT' as const, allocationAmountUsd: 100 };
  await dispatch(app, 'FollowAgent', { userId: user.userId, input });
  t.equal(await add(alpha), 3, 'a follow dispatched outside the routes is counted');
  await dispatch(app, 'StopFollowing', { userId: user.userId, agentId: beta });
  t.equal(await add(alpha), 2, 'a stop dispatched outside the routes is counted');
  await dispatch(app, 'StopFollowing', { userId: user.userId, agentId: alpha });
  t.equal(await add(gamma), 1, 'the remaining one');
});

t.test('a runner replaying old events cannot put back an agent the user has stopped following', async (t) => {
  const { app, user, agents } = await setting(t, 'replayed@example.test');
  const [alpha, beta] = agents;
  const followed = await api(app, 'POST', PATH, { token: user.accessToken, body: { agentId: alpha, allocationMode: 'USD_AMOUNT', allocationAmountUsd: 100 } });
  t.equal(followed.status, 200);
  await dispatch(app, 'StopFollowing', { userId: user.userId, agentId: alpha });
  const answer = await api(app, 'POST', PATH, { token: user.accessToken, body: { agentId: beta, allocationMode: 'USD_AMOUNT', allocationAmountUsd: 100 } });
  t.equal(answer.body.data.strategyCount, 1, 'beta alone');
  // what a runner starting below the read model's checkpoint reports again: the user's old follow of alpha
  const history = await committedLog(app);
  const oldFollow = history.find((e) => e.type === 'AgentFollowed' && (e.data as { agentId: string }).agentId === alpha);
  t.ok(oldFollow, 'the old follow is in the log');
  // the read model has the user's writes (a read waits for them)
  t.equal((await api(app, 'GET', PATH, { token: user.accessToken })).status, 200);
  // a process just started: its runner replays from an old checkpoint while its API remembers what the read model holds now
  const counts = createStrategyCounts({ pool: app.deps.pool, remember: true });
  t.equal(await counts.besides(user.userId, 'virtual', alpha), 1, 'remembered from the read model: beta');
  counts.committed([oldFollow!]);
  t.equal(await counts.besides(user.userId, 'virtual', alpha), 1, 'alpha is not put back: the read already held its stop');
  t.equal(await counts.besides(user.userId, 'virtual', beta), 0, 'and beta is the only one');
});
