// Capital in and out through the real HTTP API: add, withdraw and stop following, in the
// virtual context, with the spec's errors, concurrency and the answer rendered from the pool state.
import t from 'tap';
import { poolId } from '../../domain/pool/state.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { api, dispatch, loadState, startTestApp } from '../support/app.ts';
import { followableAgent, seatHolders } from '../support/agents.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';
import { signIn, type SignedIn } from '../support/auth.ts';

const SUBS = '/api/v1/users/me/subscriptions';
const START = 10_000;

t.test('allocation add, withdraw and stop following', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  let users = 0;
  const newUser = () => signIn(app, `ledger${++users}@example.test`);
  const agent = (body: Record<string, unknown> = {}) =>
    followableAgent(
      app,
      { developer: dev.accessToken, admin: admin.accessToken },
      { name: `Ledger ${users}`, venue: 'SPOT_VENUE', minAllocationUsd: 10, ...body },
      { live: !('maxBetaUsers' in body) },
    );
  const follow = (u: SignedIn, agentId: string, usd: number) => api(app, 'POST', SUBS, { token: u.accessToken, body: { agentId, allocationAmountUsd: usd } });
  const add = (u: SignedIn, agentId: string, body: unknown) => api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: u.accessToken, body });
  const withdraw = (u: SignedIn, agentId: string, body: unknown) => api(app, 'POST', `${SUBS}/${agentId}/allocation/withdraw`, { token: u.accessToken, body });
  const stop = (u: SignedIn, agentId: string, query = '') => api(app, 'DELETE', `${SUBS}/${agentId}${query}`, { token: u.accessToken });
  const list = async (u: SignedIn) => (await api(app, 'GET', SUBS, { token: u.accessToken })).body.data as Array<Record<string, any>>;
  const walletMicro = async (u: SignedIn) => (await loadState(app, walletDecider, u.userId)).state.balances.virtual;

  await t.test('add and withdraw move capital between the wallet and the pool, and the answer equals the list', async (t) => {
    const u = await newUser();
    const a = await agent();
    t.equal((await follow(u, a, 100)).status, 200);
    const added = await add(u, a, { amountUsd: 50.5 });
    t.equal(added.status, 200, JSON.stringify(added.body));
    t.equal(added.body.data.subscription.allocatedUsd, 150.5);
    t.match(added.body.data, { success: true, message: /Added 50.5 USD/, agentName: String });
    t.same(added.body.data.subscription, (await list(u))[0], 'the answer rendered from the pool is the row the read model holds');
    const out = await withdraw(u, a, { amountUsd: 20.25 });
    t.equal(out.status, 200, JSON.stringify(out.body));
    t.equal(out.body.data.subscription.allocatedUsd, 130.25);
    t.equal(out.body.data.subscription.pendingDeltaUsd, 0, 'virtual: confirmed at once');
    t.same(out.body.data.subscription, (await list(u))[0]);
    t.equal(await walletMicro(u), (START - 130.25) * 1_000_000, 'wallet + pool = the start');
  });

  await t.test('bad input is a 400 in the envelope, an unknown pool a 404', async (t) => {
    const u = await newUser();
    const a = await agent();
    await follow(u, a, 100);
    for (const body of [
      {},
      { amountUsd: 0.001 },
      { amountUsd: '10' },
      { amountUsd: -1 },
      { amountUsd: 1.0000001 },
      { amountUsd: 1e300 },
      { amountUsd: 1, walletContext: 'paper' },
    ]) {
      const res = await withdraw(u, a, body);
      t.equal(res.status, 400, JSON.stringify(body));
      t.match(res.body, { success: false, error: { code: 'BAD_REQUEST', reason: 'VALIDATION_FAILED' } });
    }
    const other = await agent();
    const missing = await withdraw(u, other, { amountUsd: 1 });
    t.equal(missing.status, 404);
    t.equal(missing.body.error.reason, 'SUBSCRIPTION_NOT_FOUND');
    t.equal((await add(u, other, { amountUsd: 1 })).status, 404);
    t.equal((await stop(u, other)).status, 404);
    t.equal((await withdraw(u, a, { amountUsd: 1, walletContext: 'real' })).status, 404, 'the other context is another pool');
    const tooMuch = await withdraw(u, a, { amountUsd: 100.01 });
    t.equal(tooMuch.status, 400);
    t.match(tooMuch.body.error, { code: 'BAD_REQUEST', reason: 'EXCEEDS_WITHDRAWABLE', withdrawableUsd: 100, message: /100 USD/ });
    const broke = await add(u, a, { amountUsd: START });
    t.equal(broke.status, 400);
    t.equal(broke.body.error.reason, 'INSUFFICIENT_FUNDS');
  });

  await t.test("open trades of this pool block what they lock (ALLOCATION_FUNDS_IN_USE); another agent's trades never do", async (t) => {
    const u = await newUser();
    const [a, b] = [await agent(), await agent()];
    await follow(u, a, 100);
    await follow(u, b, 100);
    await dispatch(app, 'RecordPoolFact', { poolId: poolId(u.userId, a, 'virtual'), fact: { type: 'OpenTrade', data: oneTrade('tr-1', 60_000_000) } });
    const blocked = await withdraw(u, a, { amountUsd: 50 });
    t.equal(blocked.status, 409);
    t.match(blocked.body.error, { code: 'ALLOCATION_FUNDS_IN_USE', reason: 'ALLOCATION_FUNDS_IN_USE', withdrawableUsd: 40 });
    t.equal((await withdraw(u, a, { amountUsd: 40 })).status, 200, 'the free part leaves');
    t.equal((await withdraw(u, b, { amountUsd: 100 })).status, 200, "another agent's trade does not block");
    const stopped = await stop(u, a);
    t.equal(stopped.status, 409);
    t.equal(stopped.body.error.code, 'ALLOCATION_FUNDS_IN_USE');
  });

  await t.test('20 concurrent withdrawals from one pool never take the same dollar', async (t) => {
    const u = await newUser();
    const a = await agent();
    await follow(u, a, 1000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => withdraw(u, a, { amountUsd: 60 })));
    const ok = answers.filter((r) => r.status === 200).length;
    t.equal(ok, 16, '16 × 60 fit in 1000');
    t.same(
      answers.filter((r) => r.status !== 200).map((r) => r.body.error.reason),
      Array(4).fill('EXCEEDS_WITHDRAWABLE'),
      'the rest get the business 400, no 5xx',
    );
    const [row] = await list(u);
    t.equal(row!.allocatedUsd, 40);
    t.equal(await walletMicro(u), (START - 40) * 1_000_000, 'money is conserved to the micro-USD');
  });

  await t.test('10 concurrent withdrawals racing a stop: each is before the stop or finds no pool; money adds up', async (t) => {
    const u = await newUser();
    const a = await agent();
    await follow(u, a, 500);
    const answers = await Promise.all([...Array.from({ length: 10 }, () => withdraw(u, a, { amountUsd: 10 })), stop(u, a)]);
    const stopAnswer = answers.at(-1)!;
    t.equal(stopAnswer.status, 200, JSON.stringify(stopAnswer.body));
    t.notOk(stopAnswer.body.data.subscription, 'the pool leaves the list');
    for (const r of answers.slice(0, 10)) t.ok(r.status === 200 || r.body.error.reason === 'SUBSCRIPTION_NOT_FOUND', `withdrawal: ${r.status}`);
    t.same(await list(u), []);
    t.equal(await walletMicro(u), START * 1_000_000, 'everything is back in the wallet');
  });

  await t.test('stop following returns everything, frees the beta seat, and a later follow opens the pool anew', async (t) => {
    const [u, v] = [await newUser(), await newUser()];
    const beta = await agent({ maxBetaUsers: 1 });
    t.equal((await follow(u, beta, 100)).status, 200);
    t.equal((await follow(v, beta, 100)).status, 409, 'the only seat is taken');
    const stopped = await stop(u, beta);
    t.equal(stopped.status, 200);
    t.match(stopped.body.data, { success: true, message: /100 USD returned/ });
    t.same(await seatHolders(app, beta), [], 'the seat is free');
    t.equal((await follow(v, beta, 100)).status, 200, 'another user takes it');
    t.equal((await stop(v, beta)).status, 200);
    const again = await follow(u, beta, 30);
    t.equal(again.status, 200);
    t.equal(again.body.data.subscription.allocatedUsd, 30, 'the pool opens anew with an empty ledger');
    const events = await app.deps.store.readStream(`pool-${poolId(u.userId, beta, 'virtual')}`);
    t.same(
      events.map((e) => e.type),
      ['AgentFollowed', 'AllocationAdded', 'WithdrawalRequested', 'PoolClosed', 'AgentFollowed', 'AllocationAdded'],
      'its history stays',
    );
    t.equal(await walletMicro(u), (START - 30) * 1_000_000);
  });
});
