// An administrator ends every live session of a user (an account believed taken over): each access
// and refresh token of the user stops working, the events carry the administrator as actor, and a
// repeat ends nothing. 401 anonymous, 403 for anyone but an administrator, 404 unknown user.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { userDecider } from '../../domain/user/decide.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn, TEST_USER_AGENT } from '../support/auth.ts';

const ADMIN = 'admin@example.test';

t.test('an administrator ends every session of a user', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const end = (userId: string, token?: string) => api(app, 'POST', `/api/admin/users/${userId}/sessions/end`, token ? { token } : {});
  const refresh = (refreshToken: string) => api(app, 'POST', '/api/auth/refresh', { headers: { 'user-agent': TEST_USER_AGENT }, body: { refreshToken } });

  const laptop = await signIn(app, 'taken-over@example.test');
  const phone = await signIn(app, 'taken-over@example.test');
  const signedOut = await signIn(app, 'taken-over@example.test');
  t.equal((await api(app, 'POST', '/api/auth/sign-out', { body: { refreshToken: signedOut.refreshToken } })).status, 200);
  const bystander = await signIn(app, 'bystander@example.test');

  t.equal((await end(laptop.userId)).status, 401, 'anonymous');
  const self = await end(laptop.userId, laptop.accessToken);
  t.equal(self.status, 403);
  t.equal(self.body.error.reason, 'ADMIN_REQUIRED');
  t.equal((await end(randomUUID(), admin.accessToken)).status, 404, 'unknown user');
  t.equal((await end('not-a-user', admin.accessToken)).status, 400);
  t.equal((await api(app, 'GET', '/api/v1/users/me', { token: laptop.accessToken })).status, 200, 'none of those ended anything');

  const res = await end(laptop.userId, admin.accessToken);
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.same(res.body.data, { userId: laptop.userId, sessionsEnded: 2 }, 'the two live sessions (one was signed out already)');
  for (const session of [laptop, phone]) {
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: session.accessToken })).status, 401, 'its access token is refused');
    t.equal((await refresh(session.refreshToken)).status, 401, 'its refresh token too');
  }
  t.equal((await api(app, 'GET', '/api/v1/users/me', { token: bystander.accessToken })).status, 200, "another user's session goes on");
  const ended = (await app.deps.store.readStream(userDecider.streamOf(laptop.userId))).filter((e) => e.type === 'SessionEnded').slice(-2);
  t.same(ended.map((e) => [(e.data as { reason: string }).reason, e.metadata.actor]), [['ended_by_admin', admin.userId], ['ended_by_admin', admin.userId]]);
  t.same((await end(laptop.userId, admin.accessToken)).body.data, { userId: laptop.userId, sessionsEnded: 0 }, 'a repeat ends nothing');
  const back = await signIn(app, 'taken-over@example.test');
  t.equal((await api(app, 'GET', '/api/v1/users/me', { token: back.accessToken })).status, 200, 'the user signs in again');
});
