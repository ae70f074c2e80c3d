// Active API keys are remembered per API process (api/plugins/api-key.ts, infra/identity-cache.ts,
// IDENTITY_CACHE_TTL_MS): a key revoked by its owner or by an administrator's revoke is refused at
// once by the process that applied the change, and by a second API process within the bound; a tier
// changed reaches the key's budget the same way (docs/decisions.md, "API keys remembered per process").
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { api, startTestApp, type TestApp } from '../support/app.ts';
import { signedApi, type ApiKeyCredentials } from '../support/api-keys.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { startServiceProcess } from '../support/process.ts';

const ADMIN = 'key-keeper@example.com';
/** IDENTITY_CACHE_TTL_MS's most (infra/config.ts): no process may use a revoked key longer. */
const BOUND_MS = 2_000;

const me = (server: { url: string }, key: ApiKeyCredentials) => signedApi(server, key, 'GET', '/api/v1/users/me');

/** ms from now until `server` answers `done` (fails past the bound, with room for a loaded machine's scheduling). */
async function within(server: { url: string }, key: ApiKeyCredentials, done: (answer: Awaited<ReturnType<typeof me>>) => boolean): Promise<number> {
  const started = performance.now();
  for (;;) {
    const answer = await me(server, key);
    const elapsed = performance.now() - started;
    if (done(answer)) return elapsed;
    if (answer.status !== 200) throw new Error(`unexpected ${answer.status}`);
    if (elapsed > BOUND_MS + 1_000) return elapsed;
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('a revoked key is refused at once here and within the bound by a second API process', async (t) => {
  // Both processes in one Redis key space (the second process has no test scope of its own): the notices reach it.
  const REDIS_PREFIX = `key-cache-${randomBytes(6).toString('hex')}`;
  // Tiers told apart by their budgets, in both processes.
  const limits = { RATE_LIMIT_FREE_PER_MIN: '100000', RATE_LIMIT_PREMIUM_PER_MIN: '300000' };
  const app: TestApp = await startTestApp({ config: { ADMIN_EMAILS: ADMIN, REDIS_PREFIX, ...limits }, redisKeyPrefix: '' });
  t.teardown(() => app.close());
  const second = await startServiceProcess(app, 'api', { REDIS_PREFIX, ...limits });
  t.teardown(() => second.stop());
  const admin = await signIn(app, ADMIN);
  const keyOf = async (u: SignedIn): Promise<ApiKeyCredentials & { id: string }> => {
    const res = await api(app, 'POST', '/api/api-keys', { token: u.accessToken, body: { name: 'cached' } });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return { id: res.body.data.id, apiKey: res.body.data.apiKey, secretKey: res.body.data.secretKey };
  };

  /** The key answered 200 by both processes twice (the second answer from memory), then `revoke` runs. */
  const revokedEverywhere = async (t: Test, key: ApiKeyCredentials, revoke: () => Promise<void>) => {
    for (const server of [app, second, app, second]) t.equal((await me(server, key)).status, 200, 'in use before');
    await revoke();
    t.equal((await me(app, key)).status, 401, 'refused at once by the process that applied the change');
    const ms = await within(second, key, (answer) => answer.status === 401);
    t.ok(ms <= BOUND_MS, `refused by the second process after ${Math.round(ms)} ms (bound ${BOUND_MS} ms)`);
    const again = await me(second, key);
    t.equal(again.status, 401, 'and stays refused');
    t.equal(again.body.error.reason, 'AUTHENTICATION_REQUIRED');
  };

  await t.test('revoked by its owner', async (t) => {
    const owner = await signIn(app, 'key-owner@example.com');
    const key = await keyOf(owner);
    await revokedEverywhere(t, key, async () => {
      t.equal((await api(app, 'DELETE', `/api/api-keys/${key.id}`, { token: owner.accessToken })).status, 200);
    });
  });

  await t.test("an administrator's revoke of the owner's access", async (t) => {
    const owner = await signIn(app, 'key-taken-over@example.com');
    const key = await keyOf(owner);
    await revokedEverywhere(t, key, async () => {
      t.equal((await api(app, 'POST', `/api/admin/users/${owner.userId}/access/revoke`, { token: admin.accessToken })).status, 200);
    });
  });

  await t.test("another key of the same owner stays usable after one's revocation", async (t) => {
    const owner = await signIn(app, 'two-keys@example.com');
    const [first, other] = [await keyOf(owner), await keyOf(owner)];
    await revokedEverywhere(t, first, async () => {
      t.equal((await api(app, 'DELETE', `/api/api-keys/${first.id}`, { token: owner.accessToken })).status, 200);
    });
    t.equal((await me(app, other)).status, 200);
    t.equal((await me(second, other)).status, 200);
  });

  await t.test("the owner's tier changed: the key's budget follows, here at once and there within the bound", async (t) => {
    const owner = await signIn(app, 'key-upgraded@example.com');
    const key = await keyOf(owner);
    const limitOf = (answer: Awaited<ReturnType<typeof me>>) => answer.headers.get('x-ratelimit-limit');
    const before = limitOf(await me(app, key));
    t.equal(limitOf(await me(second, key)), before);
    const tier = await api(app, 'PUT', `/api/admin/users/${owner.userId}/tier`, { token: admin.accessToken, body: { tier: 'premium' } });
    t.equal(tier.status, 200);
    const after = limitOf(await me(app, key));
    t.equal(before, '100000');
    t.equal(after, '300000', 'at once here');
    const ms = await within(second, key, (answer) => limitOf(answer) === after);
    t.ok(ms <= BOUND_MS, `the second process after ${Math.round(ms)} ms`);
  });
});
