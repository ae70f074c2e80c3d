// Hot streams: a valid command is never refused because other writers touched its streams. Many
// follows of one wallet at once, from one process and from two; many followers of one beta agent.
import t from 'tap';
import { until } from '../support/until.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { balanceOf } from '../../domain/wallet/state.ts';
import { api, loadState, startTestApp, type TestApp } from '../support/app.ts';
import { followableAgent, seatHolders } from '../support/agents.ts';
import { manyUsers, signIn, type SignedIn } from '../support/auth.ts';
import { startServiceProcess } from '../support/process.ts';

const ADMIN = 'admin@example.test';
const START_MICRO = 10_000_000_000;
const FOLLOW = '/api/v1/users/me/subscriptions';

t.test('hot streams never refuse a valid command', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN, DATABASE_POOL_SIZE: '10' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'dev@example.test');
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  const agents: string[] = [];
  for (let i = 0; i < 50; i += 10) {
    agents.push(
      ...(await Promise.all(
        Array.from({ length: 10 }, (_, j) => followableAgent(app, tokens, { name: `Hot ${i + j}`, minAllocationUsd: 10 }, { live: true })),
      )),
    );
  }
  const follow = (base: Pick<TestApp, 'url'>, user: SignedIn, body: Record<string, unknown>) => api(base, 'POST', FOLLOW, { token: user.accessToken, body });

  /** Wallet plus every pool of the user, in micro-USD, from the streams. */
  const holdings = async (user: SignedIn) => {
    const { state: wallet } = await loadState(app, walletDecider, user.userId);
    let total = balanceOf(wallet, 'virtual', START_MICRO);
    for (const agentId of agents) {
      const { state } = await loadState(app, poolDecider, `${user.userId}.${agentId}.virtual`);
      if (state.followed) total += state.ledger.confirmedIn;
    }
    return total;
  };
  const amountOf = (i: number) => 100 + i + 0.123457; // every amount distinct, down to the micro-USD

  await t.test("one user's 50 concurrent follows of 50 agents all succeed and the money adds up", async (t) => {
    const [user] = await manyUsers(app, 'fifty', 1);
    const results = await Promise.all(agents.map((agentId, i) => follow(app, user!, { agentId, allocationAmountUsd: amountOf(i) })));
    t.same(
      results.map((r) => r.status),
      agents.map(() => 200),
      'fifty 200s, not one 409 or 503',
    );
    t.equal(await holdings(user!), START_MICRO, 'wallet plus pools equal the 10000 USD start, to the micro-USD');
    const listed = (await api(app, 'GET', FOLLOW, { token: user!.accessToken })).body.data as Array<{ allocatedUsd: number }>;
    t.equal(listed.length, 50);
    const allocatedMicro = agents.reduce((sum, _, i) => sum + Math.round(amountOf(i) * 1e6), 0);
    t.equal(Math.round(listed.reduce((sum, s) => sum + s.allocatedUsd, 0) * 1e6), allocatedMicro, 'the read model shows every pool');
  });

  await t.test('the same with two API processes on one database', async (t) => {
    const second = await startServiceProcess(app, 'api');
    t.teardown(() => second.stop());
    const [user] = await manyUsers(app, 'two-processes', 1);
    const results = await Promise.all(agents.map((agentId, i) => follow(i % 2 ? second : app, user!, { agentId, allocationAmountUsd: amountOf(i) })));
    t.same(
      results.map((r) => r.status),
      agents.map(() => 200),
      'fifty 200s across the two processes',
    );
    t.equal(await holdings(user!), START_MICRO, 'wallet plus pools equal the start, to the micro-USD');
  });

  await t.test('300 users following one beta agent with 100 seats at once: exactly 100 in, 200 business 409s', async (t) => {
    const beta = await followableAgent(app, tokens, { name: 'Crowded Beta', minAllocationUsd: 10, maxBetaUsers: 100 });
    const users = await manyUsers(app, 'crowd', 300);
    const results = await Promise.all(users.map((user) => follow(app, user, { agentId: beta, allocationAmountUsd: 10 })));
    const statuses = results.map((r) => r.status);
    t.equal(statuses.filter((s) => s === 200).length, 100, 'exactly 100 followers');
    const refused = results.filter((r) => r.status === 409);
    t.equal(refused.length, 200, '200 refused');
    t.ok(
      refused.every((r) => r.body.error.code === 'CONFLICT' && r.body.error.reason === 'BETA_FULL'),
      'each refusal is BETA_FULL',
    );
    t.equal(statuses.filter((s) => s >= 500).length, 0, 'no 5xx');
    t.equal((await seatHolders(app, beta)).length, 100, 'the seat shards hold 100 seats');
    // A public read waits for no one's writes: the count shows every follow once projected.
    const seats = async () => (await api(app, 'GET', `/api/v1/agents/${beta}`)).body.data.performanceStats.betaSeatsTaken as number;
    await until('the 100 seats counted', async () => (await seats()) === 100, 10_000);
    t.equal(await seats(), 100);
    const followed = new Set(users.filter((_, i) => statuses[i] === 200).map((u) => u.userId));
    t.same(new Set(await seatHolders(app, beta)), followed, 'the seat holders are the followers');
    for (const [i, user] of users.entries()) {
      const { state: wallet } = await loadState(app, walletDecider, user.userId);
      const spent = START_MICRO - balanceOf(wallet, 'virtual', START_MICRO);
      if (spent !== (statuses[i] === 200 ? 10_000_000 : 0)) t.fail(`user ${i}: ${spent} micro-USD left the wallet`);
    }
  });
});
