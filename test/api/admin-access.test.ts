// An administrator revokes every access of a user believed taken over: sessions (access and refresh
// tokens), API keys and OAuth grants (their tokens, and the consent page's sign-in) all stop working;
// the events carry the administrator as actor; a repeat revokes nothing more. 401 anonymous, 403 for
// anyone but an administrator, 404 unknown user. OAuth is the real flow: openid-client and Chromium.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import * as client from 'openid-client';
import { apiKeyStream } from '../../domain/apikey/decide.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { api } from '../support/app.ts';
import { signedApi } from '../support/api-keys.ts';
import { signIn, TEST_USER_AGENT } from '../support/auth.ts';
import { authorizationRequest, browserProfile, callbackReached, registerClient, signInOnConsentPage, startOAuthTestBed } from '../support/oauth.ts';

const ADMIN = 'admin@example.test';
const VICTIM = 'taken-over@example.test';

t.test('an administrator revokes every access of a user', async (t) => {
  const { app, browser, callback } = await startOAuthTestBed(t, { config: { ADMIN_EMAILS: ADMIN } });
  const admin = await signIn(app, ADMIN);
  const revoke = (userId: string, token?: string) => api(app, 'POST', `/api/admin/users/${userId}/access/revoke`, token ? { token } : {});
  const refresh = (refreshToken: string) => api(app, 'POST', '/api/auth/refresh', { headers: { 'user-agent': TEST_USER_AGENT }, body: { refreshToken } });
  const me = (token: string) => api(app, 'GET', '/api/v1/users/me', { token });

  // The user's access: two live sessions and one signed out, two API keys, an OAuth grant with its token.
  const laptop = await signIn(app, VICTIM);
  const phone = await signIn(app, VICTIM);
  const signedOut = await signIn(app, VICTIM);
  t.equal((await api(app, 'POST', '/api/auth/sign-out', { body: { refreshToken: signedOut.refreshToken } })).status, 200);
  const keys = [];
  for (const name of ['bot', 'script']) {
    const created = await api(app, 'POST', '/api/api-keys', { token: laptop.accessToken, body: { name, scopes: ['profile:read'] } });
    keys.push({ id: created.body.data.id as string, apiKey: created.body.data.apiKey as string, secretKey: created.body.data.secretKey as string });
  }
  const config = await registerClient(app, callback);
  const attempt = await authorizationRequest(config);
  const { page, context } = await browserProfile(browser);
  t.teardown(() => context.close());
  await page.goto(attempt.url.href);
  await signInOnConsentPage(app, page, VICTIM);
  await page.getByRole('button', { name: 'Allow' }).click();
  const tokens = await client.authorizationCodeGrant(config, await callbackReached(callback, page), {
    pkceCodeVerifier: attempt.verifier,
    expectedState: attempt.state,
  });
  const bystander = await signIn(app, 'bystander@example.test');
  t.equal((await me(tokens.access_token)).status, 200, 'the OAuth token works');
  t.equal((await signedApi(app, keys[0]!, 'GET', '/api/v1/users/me')).status, 200, 'the key works');

  t.equal((await revoke(laptop.userId)).status, 401, 'anonymous');
  const self = await revoke(laptop.userId, laptop.accessToken);
  t.equal(self.status, 403);
  t.equal(self.body.error.reason, 'ADMIN_REQUIRED');
  t.equal((await revoke(randomUUID(), admin.accessToken)).status, 404, 'unknown user');
  t.equal((await revoke('not-a-user', admin.accessToken)).status, 400);
  t.equal((await me(laptop.accessToken)).status, 200, 'none of those revoked anything');

  const res = await revoke(laptop.userId, admin.accessToken);
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.same(
    res.body.data,
    { userId: laptop.userId, sessionsEnded: 2, apiKeysRevoked: 2, oauthGrantsRevoked: 1 },
    'the two live sessions (one was signed out already), both keys, the grant',
  );
  for (const session of [laptop, phone]) {
    t.equal((await me(session.accessToken)).status, 401, 'a session access token is refused');
    t.equal((await refresh(session.refreshToken)).status, 401, 'its refresh token too');
  }
  for (const key of keys) t.equal((await signedApi(app, key, 'GET', '/api/v1/users/me')).status, 401, 'an API key is refused');
  t.equal((await me(tokens.access_token)).status, 401, 'the OAuth token is refused');
  t.same((await api(app, 'GET', '/status', { token: tokens.access_token })).body.data, { active: false });
  await page.goto((await authorizationRequest(config)).url.href);
  await page.getByLabel('Email').waitFor();
  t.pass('the consent page asks to sign in again: its sign-in ended too');
  t.equal((await me(bystander.accessToken)).status, 200, "another user's session goes on");

  const ended = (await app.deps.store.readStream(userDecider.streamOf(laptop.userId))).filter((e) => e.type === 'SessionEnded').slice(-2);
  t.same(
    ended.map((e) => [(e.data as { reason: string }).reason, e.metadata.actor]),
    [
      ['ended_by_admin', admin.userId],
      ['ended_by_admin', admin.userId],
    ],
  );
  for (const key of keys)
    t.equal((await app.deps.store.readStream(apiKeyStream(key.id))).at(-1)?.metadata.actor, admin.userId, 'each key revoked by the administrator');
  t.same(
    (await revoke(laptop.userId, admin.accessToken)).body.data,
    { userId: laptop.userId, sessionsEnded: 0, apiKeysRevoked: 0, oauthGrantsRevoked: 0 },
    'a repeat revokes nothing more',
  );
  t.equal((await me((await signIn(app, VICTIM)).accessToken)).status, 200, 'the user signs in again');
});
