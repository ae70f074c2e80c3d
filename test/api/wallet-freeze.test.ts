// Administrators freeze and unfreeze a user's wallet: a frozen wallet pays nothing out
// (follows, allocation adds) and still takes money coming home (a withdrawal from a pool).
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { walletStream } from '../../domain/wallet/state.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';

const ADMIN = 'admin@example.test';
const SUBS = '/api/v1/users/me/subscriptions';

t.test('freezing a wallet', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'dev@example.test');
  let users = 0;
  const newUser = () => signIn(app, `frozen${++users}@example.test`);
  const agent = () =>
    followableAgent(
      app,
      { developer: dev.accessToken, admin: admin.accessToken },
      { name: `Frozen ${++users}`, venue: 'SPOT_VENUE', minAllocationUsd: 10 },
      { live: true },
    );
  const freeze = (userId: string, body?: unknown, token = admin.accessToken) =>
    api(app, 'POST', `/api/admin/wallets/${userId}/freeze`, { token, ...(body === undefined ? {} : { body }) });
  const unfreeze = (userId: string, token = admin.accessToken) => api(app, 'POST', `/api/admin/wallets/${userId}/unfreeze`, { token });
  const wallet = async (u: SignedIn) => (await api(app, 'GET', '/api/v1/wallet', { token: u.accessToken })).body.data;
  const pools = async (u: SignedIn) => ((await api(app, 'GET', SUBS, { token: u.accessToken })).body.data as any[]).map((p) => [p.agentId, p.allocatedUsd]);
  const follow = (u: SignedIn, agentId: string, usd: number) => api(app, 'POST', SUBS, { token: u.accessToken, body: { agentId, allocationAmountUsd: usd } });
  const add = (u: SignedIn, agentId: string, usd: number) =>
    api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: u.accessToken, body: { amountUsd: usd } });
  const withdraw = (u: SignedIn, agentId: string, usd: number) =>
    api(app, 'POST', `${SUBS}/${agentId}/allocation/withdraw`, { token: u.accessToken, body: { amountUsd: usd } });

  await t.test('a frozen wallet refuses follows and adds with WALLET_FROZEN, changing nothing; money still comes home; unfreezing restores', async (t) => {
    const u = await newUser();
    const [followed, other] = [await agent(), await agent()];
    t.equal((await follow(u, followed, 100)).status, 200);

    const frozen = await freeze(u.userId, { reason: 'chargeback under review' });
    t.equal(frozen.status, 200, JSON.stringify(frozen.body));
    t.same(frozen.body.data, { userId: u.userId, frozen: true, frozenAt: frozen.body.data.frozenAt, reason: 'chargeback under review' });
    t.ok(!Number.isNaN(Date.parse(frozen.body.data.frozenAt)));
    const before = { wallet: await wallet(u), pools: await pools(u) };
    t.equal(before.wallet.frozen, true, 'GET /api/v1/wallet shows the freeze at once');

    for (const [what, res] of [
      ['a follow', await follow(u, other, 50)],
      ['a follow adding to the pool', await follow(u, followed, 150)],
      ['an allocation add', await add(u, followed, 10)],
    ] as const) {
      t.equal(res.status, 403, what);
      t.match(res.body, { success: false, error: { code: 'WALLET_FROZEN', reason: 'WALLET_FROZEN' } }, what);
    }
    t.same({ wallet: await wallet(u), pools: await pools(u) }, before, 'wallet and pools as they were');

    const out = await withdraw(u, followed, 30);
    t.equal(out.status, 200, JSON.stringify(out.body));
    t.equal(out.body.data.subscription.allocatedUsd, 70);
    t.same((await wallet(u)).wallets[0], { walletContext: 'virtual', balanceUsd: 9930 }, 'a withdrawal comes home into a frozen wallet');

    const again = await freeze(u.userId, { reason: 'another note' });
    t.same(again.body.data, frozen.body.data, 'a repeat changes nothing and answers the freeze in force');

    const thawed = await unfreeze(u.userId);
    t.equal(thawed.status, 200);
    t.same(thawed.body.data, { userId: u.userId, frozen: false });
    t.equal((await wallet(u)).frozen, false);
    t.equal((await add(u, followed, 10)).status, 200, 'an unfrozen wallet pays again');
    t.same((await unfreeze(u.userId)).body.data, { userId: u.userId, frozen: false }, 'a repeat unfreeze changes nothing');

    const events = await app.deps.store.readStream(walletStream(u.userId));
    const freezes = events.filter((e) => e.type === 'WalletFrozen' || e.type === 'WalletUnfrozen');
    t.same(
      freezes.map((e) => [e.type, e.metadata.actor]),
      [
        ['WalletFrozen', admin.userId],
        ['WalletUnfrozen', admin.userId],
      ],
      'once each, the administrator as actor',
    );
    t.match(freezes[0]!.data, { reason: 'chargeback under review' });
  });

  await t.test('a wallet never used opens frozen, without a body', async (t) => {
    const u = await newUser();
    const res = await freeze(u.userId);
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.same(Object.keys(res.body.data).sort(), ['frozen', 'frozenAt', 'userId']);
    t.match(await wallet(u), {
      frozen: true,
      wallets: [
        { walletContext: 'virtual', balanceUsd: 10000 },
        { walletContext: 'real', balanceUsd: 0 },
      ],
    });
    const events = await app.deps.store.readStream(walletStream(u.userId));
    t.same(
      events.map((e) => e.type),
      ['WalletOpened', 'WalletFrozen'],
    );
  });

  await t.test('administrators only; an unknown user is a 404; a reason is 1 to 500 characters', async (t) => {
    const u = await newUser();
    const anonymous = await api(app, 'POST', `/api/admin/wallets/${u.userId}/freeze`, {});
    t.equal(anonymous.status, 401);
    for (const res of [await freeze(u.userId, {}, u.accessToken), await unfreeze(u.userId, u.accessToken)]) {
      t.equal(res.status, 403);
      t.match(res.body, { success: false, error: { code: 'FORBIDDEN', reason: 'ADMIN_REQUIRED' } });
    }
    for (const res of [await freeze(randomUUID()), await unfreeze(randomUUID())]) {
      t.equal(res.status, 404);
      t.match(res.body, { success: false, error: { code: 'NOT_FOUND', reason: 'USER_NOT_FOUND' } });
    }
    for (const body of [{ reason: '' }, { reason: 'x'.repeat(501) }, { reason: 7 }, { note: 'x' }]) {
      const res = await freeze(u.userId, body);
      t.equal(res.status, 400, JSON.stringify(body));
      t.equal(res.body.error.reason, 'VALIDATION_FAILED');
    }
    t.equal((await wallet(u)).frozen, false, 'nothing was frozen');
    t.equal((await freeze(u.userId, { reason: 'x'.repeat(500) })).status, 200);
  });
});
