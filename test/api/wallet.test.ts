import { randomUUID } from 'node:crypto';
import t from 'tap';
import { walletStream } from '../../domain/wallet/state.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';

const ADMIN = 'admin@example.test';
const depositPath = (userId: string) => `/api/admin/wallets/${userId}/deposit`;
const balancesOf = (data: any) => Object.fromEntries((data.wallets as any[]).map((w) => [w.walletContext, w.balanceUsd]));

t.test('wallet balances and administrators’ deposits to the real context', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  let users = 0;
  const newUser = () => signIn(app, `holder${++users}@example.test`);
  const wallet = async (user: SignedIn) => {
    const res = await api(app, 'GET', '/api/v1/wallet', { token: user.accessToken });
    t.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data;
  };
  const deposit = (userId: string, body: unknown, options: { token?: string; headers?: Record<string, string> } = {}) =>
    api(app, 'POST', depositPath(userId), { token: options.token ?? admin.accessToken, body, headers: options.headers });

  await t.test('GET /api/v1/wallet needs a signed-in user', async (t) => {
    const res = await api(app, 'GET', '/api/v1/wallet');
    t.equal(res.status, 401);
    t.match(res.body, { success: false, error: { code: 'UNAUTHORIZED', reason: 'AUTHENTICATION_REQUIRED' } });
  });

  await t.test('a user who never used the wallet sees the virtual start and an empty real context', async (t) => {
    const user = await newUser();
    t.same(await wallet(user), {
      userId: user.userId,
      currentWalletContext: 'virtual',
      frozen: false,
      wallets: [
        { walletContext: 'virtual', balanceUsd: 10000 },
        { walletContext: 'real', balanceUsd: 0 },
      ],
      positions: [],
    });
  });

  await t.test('the current context follows the user’s virtualWalletMode', async (t) => {
    const user = await newUser();
    const patched = await api(app, 'PATCH', '/api/v1/users/me', { token: user.accessToken, body: { virtualWalletMode: false } });
    t.equal(patched.status, 200);
    t.equal((await wallet(user)).currentWalletContext, 'real');
  });

  await t.test('an administrator’s deposit credits the real context; the answer and the user’s GET show it at once', async (t) => {
    const user = await newUser();
    const res = await deposit(user.userId, { amountUsd: 250.123456 });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.same(balancesOf(res.body.data), { virtual: 10000, real: 250.123456 });
    t.equal(res.body.data.userId, user.userId);
    t.same(balancesOf(await wallet(user)), { virtual: 10000, real: 250.123456 }, 'read-your-writes');
    const again = await deposit(user.userId, { amountUsd: 0.000001 });
    t.equal(balancesOf(again.body.data).real, 250.123457, 'exact to the micro-USD');
    const events = await app.deps.store.readStream(walletStream(user.userId));
    t.same(
      events.map((e) => e.type),
      ['WalletOpened', 'WalletDeposited', 'WalletDeposited'],
    );
    t.ok(
      events.every((e) => e.metadata.actor === admin.userId),
      'the administrator is the actor',
    );
    t.match(events[1]!.data, { walletContext: 'real', amountMicro: 250_123_456 });
  });

  await t.test('a retry with the same Idempotency-Key or depositId credits once', async (t) => {
    const user = await newUser();
    const headers = { 'idempotency-key': 'deposit-0001' };
    for (let i = 0; i < 3; i++) {
      const res = await deposit(user.userId, { amountUsd: 100 }, { headers });
      t.equal(res.status, 200);
      t.equal(balancesOf(res.body.data).real, 100, `attempt ${i + 1}`);
    }
    const body = await deposit(user.userId, { amountUsd: 100, depositId: 'deposit-0001' });
    t.equal(balancesOf(body.body.data).real, 100, 'the body id names the same deposit as the header');
    const other = await deposit(user.userId, { amountUsd: 50, depositId: 'deposit-0002' });
    t.equal(balancesOf(other.body.data).real, 150);
    const conflict = await deposit(user.userId, { amountUsd: 101 }, { headers });
    t.equal(conflict.status, 409);
    t.match(conflict.body, { success: false, error: { code: 'CONFLICT', reason: 'ALREADY_EXISTS', message: /another amount \(100 USD\)/ } });
    const mismatch = await deposit(user.userId, { amountUsd: 100, depositId: 'deposit-0003' }, { headers });
    t.equal(mismatch.status, 400);
    t.match(mismatch.body.error, { reason: 'VALIDATION_FAILED', message: 'depositId and the Idempotency-Key header differ' });
    const badKey = await deposit(user.userId, { amountUsd: 1 }, { headers: { 'idempotency-key': 'x'.repeat(129) } });
    t.equal(badKey.status, 400);
    t.match(badKey.body.error, { reason: 'VALIDATION_FAILED', message: /idempotency-key/ });
    t.equal(balancesOf(await wallet(user)).real, 150);
  });

  await t.test('without a deposit id every request is a new deposit', async (t) => {
    const user = await newUser();
    await deposit(user.userId, { amountUsd: 10 });
    const second = await deposit(user.userId, { amountUsd: 10 });
    t.equal(balancesOf(second.body.data).real, 20);
  });

  await t.test('only administrators deposit: 401 without a token, 403 for a user, 404 for an unknown user', async (t) => {
    const user = await newUser();
    const anonymous = await api(app, 'POST', depositPath(user.userId), { body: { amountUsd: 10 } });
    t.equal(anonymous.status, 401);
    t.equal(anonymous.body.error.reason, 'AUTHENTICATION_REQUIRED');
    const self = await deposit(user.userId, { amountUsd: 10 }, { token: user.accessToken });
    t.equal(self.status, 403);
    t.match(self.body, { success: false, error: { code: 'FORBIDDEN', reason: 'ADMIN_REQUIRED' } });
    const unknown = await deposit(randomUUID(), { amountUsd: 10 });
    t.equal(unknown.status, 404);
    t.match(unknown.body, { success: false, error: { code: 'NOT_FOUND', reason: 'USER_NOT_FOUND' } });
    const malformed = await deposit('not-a-user-id', { amountUsd: 10 });
    t.equal(malformed.status, 400);
    t.match(malformed.body.error, { reason: 'VALIDATION_FAILED', message: /userId/ });
    t.equal(balancesOf(await wallet(user)).real, 0, 'nothing was credited');
  });

  await t.test('bad amounts get a 400 naming the field, never a 500', async (t) => {
    const user = await newUser();
    const cases: Array<[string, RegExp]> = [
      ['{"amountUsd":0.0000001}', /amountUsd has more than 6 decimals/],
      ['{"amountUsd":-1}', /amountUsd must be positive/],
      ['{"amountUsd":0}', /amountUsd must be positive/],
      ['{"amountUsd":"10"}', /amountUsd must be a number/],
      ['{"amountUsd":1e300}', /amountUsd must be at most 1000000000/],
      ['{"amountUsd":null}', /amountUsd must be a number/],
      ['{}', /amountUsd/],
      ['{"amountUsd":10,"walletContext":"virtual"}', /walletContext/],
      ['{"amountUsd":10,"depositId":""}', /depositId/],
      ['[]', /expected object/i],
    ];
    for (const [rawBody, message] of cases) {
      const res = await api(app, 'POST', depositPath(user.userId), { token: admin.accessToken, rawBody });
      t.equal(res.status, 400, rawBody);
      t.match(res.body, { success: false, error: { code: 'BAD_REQUEST', reason: 'VALIDATION_FAILED', message } }, rawBody);
    }
    const broken = await api(app, 'POST', depositPath(user.userId), { token: admin.accessToken, rawBody: '{"amountUsd":' });
    t.equal(broken.status, 400);
    t.equal(broken.body.error.reason, 'MALFORMED_REQUEST');
    t.equal(balancesOf(await wallet(user)).real, 0);
  });

  await t.test('deposited money pays a follow in the real context, and the wallet shows what is left', async (t) => {
    const user = await newUser();
    const dev = await signIn(app, 'dev@example.test');
    const agentId = await followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, { name: 'Real Money', venue: 'SPOT_VENUE' });
    const refused = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
      token: user.accessToken,
      body: { agentId, walletContext: 'real', allocationMode: 'USD_AMOUNT', allocationAmountUsd: 40 },
    });
    t.equal(refused.status, 400);
    t.equal(refused.body.error.reason, 'INSUFFICIENT_FUNDS');
    await deposit(user.userId, { amountUsd: 100 });
    const followed = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
      token: user.accessToken,
      body: { agentId, walletContext: 'real', allocationMode: 'USD_AMOUNT', allocationAmountUsd: 40 },
    });
    t.equal(followed.status, 200, JSON.stringify(followed.body));
    t.same(balancesOf(await wallet(user)), { virtual: 10000, real: 60 });
  });
});
