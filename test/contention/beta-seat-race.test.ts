// Beta seats under racing stop and follow, across two API processes on one database: every holder
// of a capped beta agent stops following and follows again at once (the stop on one process, the
// follow on the other), while users without a seat try to follow. Whatever interleaves, the
// agent never has more followers than seats, its seats are held by exactly its followers, and a
// follow answered 200 holds what it answered.
import t from 'tap';
import { poolDecider } from '../../domain/pool/decide.ts';
import { allocatedUsd } from '../../domain/pool/ledger.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { balanceOf } from '../../domain/wallet/state.ts';
import { api, loadState, startTestApp, type TestApp } from '../support/app.ts';
import { followableAgent, seatHolders } from '../support/agents.ts';
import { manyUsers, signIn, type SignedIn } from '../support/auth.ts';
import { startServiceProcess } from '../support/process.ts';
import { until } from '../support/until.ts';

const ADMIN = 'admin@example.test';
const START_MICRO = 10_000_000_000;
const FOLLOW = '/api/v1/users/me/subscriptions';
const CAPS = [5, 3, 7, 1];
const USERS = 20;
const ROUNDS = 5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('racing stop and follow never seats more followers than a beta agent has seats', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const second = await startServiceProcess(app, 'api');
  t.teardown(() => second.stop());
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'dev@example.test');
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  const agents = await Promise.all(CAPS.map((maxBetaUsers, i) => followableAgent(app, tokens, { name: `Race ${i}`, minAllocationUsd: 5, maxBetaUsers })));
  const users = await manyUsers(app, 'seat-race', USERS);
  const processes: Array<Pick<TestApp, 'url'>> = [app, second];
  const follow = (via: number, user: SignedIn, agentId: string, usd: number) =>
    api(processes[via % 2]!, 'POST', FOLLOW, { token: user.accessToken, body: { agentId, allocationAmountUsd: usd } });
  const stop = (via: number, user: SignedIn, agentId: string) => api(processes[via % 2]!, 'DELETE', `${FOLLOW}/${agentId}`, { token: user.accessToken });

  /** Who follows the agent, from the pool streams. */
  const followers = async (agentId: string) => {
    const pools = await Promise.all(users.map((u) => loadState(app, poolDecider, `${u.userId}.${agentId}.virtual`)));
    return users.filter((_, i) => pools[i]!.state.followed).map((u) => u.userId);
  };

  const mismatches: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Every seat taken first: the users who follow hold them, the others are refused BETA_FULL.
    for (const [a, agentId] of agents.entries()) {
      const seating = await Promise.all(users.map((u, i) => follow(i, u, agentId, 20)));
      t.equal(seating.filter((r) => r.status === 200).length, CAPS[a], `round ${round}: the ${CAPS[a]} seats of agent ${a} are taken`);
    }
    const usd = 30 + round;
    const answers = await Promise.all(
      agents.flatMap((agentId) =>
        users.flatMap((user, i) => [
          stop(i + round, user, agentId).then((r) => ({ kind: 'stop' as const, r, user, agentId })),
          // The follow a few milliseconds after the stop, spread so that some plan while the stop is half-way.
          sleep((i * 7 + round * 3) % 25)
            .then(() => follow(i + round + 1, user, agentId, usd))
            .then((r) => ({ kind: 'follow' as const, r, user, agentId })),
        ]),
      ),
    );
    t.equal(answers.filter((a) => a.r.status >= 500).length, 0, `round ${round}: no 5xx`);
    const tally = new Map<string, number>();
    for (const { kind, r } of answers) {
      const key = `${kind} ${r.status} ${r.body?.error?.reason ?? ''}`.trim();
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
    t.comment(`round ${round}: ${[...tally].map(([k, n]) => `${n}× ${k}`).join(', ')}`);
    for (const { kind, r } of answers) {
      const reason = r.body?.error?.reason;
      if (r.status !== 200 && !['SUBSCRIPTION_NOT_FOUND', 'BETA_FULL', 'UNPROCESSABLE'].includes(reason))
        t.fail(`round ${round}: ${kind} answered ${r.status} ${reason}`);
    }
    for (const { kind, r, user, agentId } of answers) {
      if (kind !== 'follow' || r.status !== 200) continue;
      const { state } = await loadState(app, poolDecider, `${user.userId}.${agentId}.virtual`);
      const answered = r.body.data.subscription;
      // A follow answered with its own pool: what it asked for is what the pool holds (unless a later stop closed it).
      if (answered && answered.allocationAmountUsd !== answered.allocatedUsd)
        mismatches.push(`${answered.allocationAmountUsd} answered, ${answered.allocatedUsd} allocated`);
      if (answered && state.followed && allocatedUsd(state.ledger) > usd * 1e6)
        mismatches.push(`pool holds ${allocatedUsd(state.ledger)} after a follow of ${usd} USD`);
    }
    for (const [a, agentId] of agents.entries()) {
      const following = await followers(agentId);
      const holders = await seatHolders(app, agentId);
      t.ok(following.length <= CAPS[a]!, `round ${round}, agent ${a}: ${following.length} followers for ${CAPS[a]} seats`);
      t.same(new Set(holders), new Set(following), `round ${round}, agent ${a}: the seats are held by the followers`);
      t.equal(holders.length, new Set(holders).size, `round ${round}, agent ${a}: nobody holds two seats`);
    }
  }
  t.same(mismatches, [], 'every follow answered 200 holds the allocation it answered');

  for (const [a, agentId] of agents.entries()) {
    const count = (await followers(agentId)).length;
    const seats = async () => (await api(app, 'GET', `/api/v1/agents/${agentId}`)).body.data.performanceStats.betaSeatsTaken as number;
    await until(`agent ${a}: betaSeatsTaken shows the ${count} followers`, async () => (await seats()) === count, 10_000).catch(() => undefined);
    t.equal(await seats(), count, `agent ${a}: betaSeatsTaken equals the followers`);
  }
  // Money: every user's wallet plus pools is the start, to the micro-USD.
  for (const user of users) {
    const { state: wallet } = await loadState(app, walletDecider, user.userId);
    let total = balanceOf(wallet, 'virtual', START_MICRO);
    for (const agentId of agents) {
      const { state } = await loadState(app, poolDecider, `${user.userId}.${agentId}.virtual`);
      if (state.followed) total += allocatedUsd(state.ledger);
    }
    if (total !== START_MICRO) t.fail(`${user.userId}: ${total} micro-USD, not ${START_MICRO}`);
  }
});
