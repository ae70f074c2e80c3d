// JWT sessions' identities are remembered per API process (infra/identity-cache.ts, IDENTITY_CACHE_TTL_MS):
// a session ended by sign-out or an administrator's revoke is refused at
// once by the process that applied the change, and by a second API process within the bound
// (docs/decisions.md, "The floor of a signed-in request"), each having used the token just before.
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { api, startTestApp, type TestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { startServiceProcess } from '../support/process.ts';

const ADMIN = 'keeper@example.com';
/** IDENTITY_CACHE_TTL_MS's most (infra/config.ts): no process may use an ended session longer. */
const BOUND_MS = 2_000;

const me = (server: { url: string }, token: string) => api(server, 'GET', '/api/v1/users/me', { token });

/** ms from now until `server` refuses the token (fails past the bound, with room for a loaded machine's scheduling). */
async function refusedWithin(server: { url: string }, token: string): Promise<number> {
  const started = performance.now();
  for (;;) {
    const status = (await me(server, token)).status;
    const elapsed = performance.now() - started;
    if (status === 401) return elapsed;
    if (status !== 200) throw new Error(`unexpected ${status}`);
    if (elapsed > BOUND_MS + 1_000) return elapsed;
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('an ended session is refused at once here and within the bound by a second API process', async (t) => {
  // Both processes in one Redis key space (the second process has no test scope of its own): the notices reach it.
  const REDIS_PREFIX = `session-cache-${randomBytes(6).toString('hex')}`;
  const app: TestApp = await startTestApp({ config: { ADMIN_EMAILS: ADMIN, REDIS_PREFIX }, redisKeyPrefix: '' });
  t.teardown(() => app.close());
  const second = await startServiceProcess(app, 'api', { REDIS_PREFIX });
  t.teardown(() => second.stop());
  const admin = await signIn(app, ADMIN);

  /** The token answered 200 by both processes twice (the second answer from memory), then `end` runs. */
  const endedEverywhere = async (t: Test, token: string, end: () => Promise<void>) => {
    for (const server of [app, second, app, second]) t.equal((await me(server, token)).status, 200, 'in use before');
    await end();
    t.equal((await me(app, token)).status, 401, 'refused at once by the process that applied the change');
    const ms = await refusedWithin(second, token);
    t.ok(ms <= BOUND_MS, `refused by the second process after ${Math.round(ms)} ms (bound ${BOUND_MS} ms)`);
    t.equal((await me(second, token)).status, 401, 'and stays refused');
  };

  await t.test('sign-out', async (t) => {
    const session = await signIn(app, 'leaving@example.com');
    await endedEverywhere(t, session.accessToken, async () => {
      t.equal((await api(app, 'POST', '/api/auth/sign-out', { body: { refreshToken: session.refreshToken } })).status, 200);
    });
  });

  await t.test("an administrator's revoke", async (t) => {
    const session = await signIn(app, 'taken-over@example.com');
    await endedEverywhere(t, session.accessToken, async () => {
      t.equal((await api(app, 'POST', `/api/admin/users/${session.userId}/access/revoke`, { token: admin.accessToken })).status, 200);
    });
  });

  await t.test("another session of the same user stays usable after one's sign-out", async (t) => {
    const first = await signIn(app, 'two-devices@example.com');
    const other = await signIn(app, 'two-devices@example.com');
    await endedEverywhere(t, first.accessToken, async () => {
      t.equal((await api(app, 'POST', '/api/auth/sign-out', { body: { refreshToken: first.refreshToken } })).status, 200);
    });
    t.equal((await me(app, other.accessToken)).status, 200);
    t.equal((await me(second, other.accessToken)).status, 200);
  });
});

t.test('a verified access token remembered by the verifier is refused once past its expiry', async (t) => {
  const app: TestApp = await startTestApp({ config: { ACCESS_TOKEN_TTL_SECONDS: '1' } });
  t.teardown(() => app.close());
  const session = await signIn(app, 'short-lived@example.com');
  t.equal((await me(app, session.accessToken)).status, 200);
  t.equal((await me(app, session.accessToken)).status, 200, 'again (the verified token and the identity remembered)');
  const { exp } = JSON.parse(Buffer.from(session.accessToken.split('.')[1]!, 'base64url').toString()) as { exp: number };
  await new Promise((r) => setTimeout(r, Math.max(0, exp * 1000 - Date.now()) + 50));
  t.equal((await me(app, session.accessToken)).status, 401, 'refused past exp');
});
