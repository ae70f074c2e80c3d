import t from 'tap';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { api, loadState, startTestApp } from '../support/app.ts';
import { interruptedFollow } from '../support/crash.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';

const PATH = '/api/v1/users/me/subscriptions';

t.test('the two-step transfer from wallet to pool', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  let users = 0;
  const newUser = () => signIn(app, `follower${++users}@example.test`);
  const followable = () =>
    followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, { name: 'Grid Bot', venue: 'SPOT_VENUE', minAllocationUsd: 10 });
  const follow = (user: SignedIn, body: Record<string, unknown>) => api(app, 'POST', PATH, { token: user.accessToken, body });
  const walletOf = async (user: SignedIn) => (await loadState(app, walletDecider, user.userId)).state;
  /** What a request that crashed after its first step leaves behind: the debit, and no pool. */
  const crashedDebit = (user: SignedIn, agentId: string, amountUsd: number) =>
    interruptedFollow(app, user.userId, { agentId, allocationAmountUsd: amountUsd }, (stream) => stream.startsWith('pool-'));

  await t.test('a follow retried after a crash between the wallet debit and the pool credit credits the debit once', async (t) => {
    const user = await newUser();
    const agentId = await followable();
    const poolId = `${user.userId}.${agentId}.virtual`;
    await crashedDebit(user, agentId, 200);
    const retried = await follow(user, { agentId, allocationAmountUsd: 200 });
    t.equal(retried.status, 200);
    t.equal(retried.body.data.subscription.allocatedUsd, 200);
    t.equal((await walletOf(user)).balances.virtual, 9_800_000_000, 'debited once, not twice');

    const events = await app.deps.store.readStream(`pool-${poolId}`);
    t.same(
      events.map((e) => e.type),
      ['AgentFollowed', 'AllocationAdded'],
    );
    t.match(events[1]!.data, { transferId: `${poolId}#add-1`, amountMicro: 200_000_000, confirmed: true, at: String });
  });

  await t.test('a recovered debit smaller than the new target is topped up to it', async (t) => {
    const user = await newUser();
    const agentId = await followable();
    await crashedDebit(user, agentId, 50);
    const res = await follow(user, { agentId, allocationAmountUsd: 500 });
    t.equal(res.body.data.subscription.allocatedUsd, 500);
    t.equal((await walletOf(user)).balances.virtual, 9_500_000_000);
  });

  await t.test('concurrent follows of the same agent converge on one row holding the largest target', async (t) => {
    const user = await newUser();
    const agentId = await followable();
    const results = await Promise.all([100, 200, 300].map((usd) => follow(user, { agentId, allocationAmountUsd: usd })));
    t.same(
      results.map((r) => r.status),
      [200, 200, 200],
    );
    const list = (await api(app, 'GET', PATH, { token: user.accessToken })).body.data as Array<{ allocatedUsd: number }>;
    t.equal(list.length, 1);
    t.equal(list[0]!.allocatedUsd, 300);
    t.equal((await walletOf(user)).balances.virtual, 9_700_000_000, 'the wallet paid exactly what the pool holds');
  });
});
