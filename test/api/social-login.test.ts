// Social login against a real OpenID Connect provider (oidc-provider) started here; the browser's
// part is plain HTTP with manual redirects (test/support/identity-provider.ts).
import t from 'tap';
import { buildApp } from '../../api/app.ts';
import { createDispatcher } from '../../commands/dispatch.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { createSocialProvider } from '../../infra/social.ts';
import { userIdForEmail } from '../../infra/tokens.ts';
import { api, loadState, startTestApp, type TestApp } from '../support/app.ts';
import { manyUsers, signIn, TEST_USER_AGENT } from '../support/auth.ts';
import { startIdentityProvider, type TestAccount } from '../support/identity-provider.ts';
import { SteppingClock, totpAt } from '../support/mfa.ts';

const ua = { 'user-agent': TEST_USER_AGENT };
const REDIRECT_URI = 'http://portal.example.test/portal/auth/social/callback';
const account = (name: string, extra: Partial<TestAccount> = {}): TestAccount => ({
  sub: `google-${name}`,
  email: `${name}@gmail.test`,
  email_verified: true,
  ...extra,
});

t.test('social login (GOOGLE) against a real OpenID Connect provider', async (t) => {
  const idp = await startIdentityProvider({ redirectUri: REDIRECT_URI });
  t.teardown(() => idp.close());
  const clock = new SteppingClock();
  const app = await startTestApp({
    clock,
    captureLogs: true,
    config: {
      SOCIAL_GOOGLE_ISSUER: idp.issuer,
      SOCIAL_GOOGLE_CLIENT_ID: idp.clientId,
      SOCIAL_GOOGLE_CLIENT_SECRET: idp.clientSecret,
      PUBLIC_BASE_URL: 'http://portal.example.test',
    },
  });
  t.teardown(() => app.close());

  const start = (body: Record<string, unknown> = {}) =>
    api(app, 'POST', '/api/auth/social/url', { headers: ua, body: { type: 'GOOGLE', fingerprint: 'fp', ...body } });
  /** What the flow shows once (states, codes, tokens): none may reach a log line (checked last). */
  const reveals: string[] = [idp.clientSecret];
  const verify = async (body: Record<string, unknown>) => {
    const res = await api(app, 'POST', '/api/auth/social/verify', { headers: ua, body });
    reveals.push(...Object.values((res.body?.data?.tokens ?? {}) as Record<string, string>));
    return res;
  };
  /** POST /social/url, then the browser at the provider signed in as `who`: the callback's parameters. */
  const authorize = async (who: TestAccount, body: Record<string, unknown> = {}, tamper?: (url: URL) => void) => {
    const res = await start(body);
    t.equal(res.status, 200, 'social/url');
    const url = new URL(res.body.data.url);
    tamper?.(url);
    idp.signInAs(who);
    const callback = await idp.browse(url.href);
    reveals.push(callback.get('state')!, callback.get('code')!);
    return { state: callback.get('state')!, code: callback.get('code')!, iss: callback.get('iss')!, started: res.body.data };
  };

  await t.test('social/url answers the provider’s authorization URL: code flow, PKCE S256, nonce, the signed state', async (t) => {
    const res = await start({ redirectPath: '/agents?tab=beta' });
    t.equal(res.status, 200);
    const { url, state, expiresAt } = res.body.data;
    const auth = new URL(url);
    t.equal(auth.origin, idp.issuer);
    const q = auth.searchParams;
    t.equal(q.get('response_type'), 'code');
    t.equal(q.get('client_id'), idp.clientId);
    t.equal(q.get('redirect_uri'), REDIRECT_URI, 'from PUBLIC_BASE_URL');
    t.match(q.get('scope'), /\bopenid\b.*\bemail\b/);
    t.equal(q.get('code_challenge_method'), 'S256');
    t.match(q.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/);
    t.match(q.get('nonce'), /^[A-Za-z0-9_-]{43}$/);
    t.equal(q.get('state'), state);
    t.match(state, /^[A-Za-z0-9_-]{43}\.[0-9a-f]{64}$/, 'an id and its signature');
    const ttl = (new Date(expiresAt).getTime() - clock.now().getTime()) / 1000;
    t.ok(ttl > 590 && ttl <= 600, `the state waits ${ttl} s`);
    const stored = await app.deps.redis.get(`auth:social-state:${state.split('.')[0]}`);
    t.ok(stored, 'kept server-side');
    t.notOk(stored!.includes(q.get('nonce')!), 'sealed: the nonce is not in the clear');
    t.ok((await app.deps.redis.ttl(`auth:social-state:${state.split('.')[0]}`)) <= 600, 'with a TTL');
  });

  await t.test('social/url refuses a body that does not validate and an unsupported provider: 400', async (t) => {
    t.equal((await api(app, 'POST', '/api/auth/social/url', { body: { type: 'GOOGLE' } })).status, 400, 'no fingerprint');
    t.equal((await api(app, 'POST', '/api/auth/social/url', { body: { fingerprint: 'fp' } })).status, 400, 'no type');
    for (const type of ['FACEBOOK', 'google']) {
      const res = await start({ type });
      t.equal(res.status, 400, type);
      t.equal(res.body.error.reason, 'UNSUPPORTED_PROVIDER');
    }
    for (const redirectPath of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      t.equal((await start({ redirectPath })).status, 400, `redirectPath ${redirectPath}`);
    }
  });

  await t.test('a new verified Google account registers, links and signs in like /api/auth/verify', async (t) => {
    const who = account('newbie');
    const { state, code, iss } = await authorize(who, { redirectPath: '/welcome', receiveMarketingOffers: true });
    const res = await verify({ state, code, iss });
    t.equal(res.status, 200);
    t.equal(res.body.data.mfaRequired, false);
    t.equal(res.body.data.redirectPath, '/welcome');
    const { accessToken, refreshToken } = res.body.data.tokens;
    const me = await api(app, 'GET', '/api/v1/users/me', { token: accessToken });
    t.match(me.body.data, { email: who.email, role: 'user', receiveMarketingOffers: true, mfaEnabled: false });
    t.match(me.body.data.username, /^user_[0-9a-f]{10}$/);
    t.equal((await api(app, 'POST', '/api/auth/refresh', { headers: ua, body: { refreshToken } })).status, 200, 'a normal session');
    const status = await api(app, 'GET', '/api/v1/users/me/social-status', { token: accessToken });
    t.equal(status.status, 200);
    t.match(status.body.data, { providers: [{ type: 'GOOGLE', linked: true, email: who.email }] });
    t.ok(new Date(status.body.data.providers[0].linkedAt) <= clock.now());
    const events = await app.deps.store.readStream(userDecider.streamOf(me.body.data.id));
    const linked = events.find((e) => e.type === 'SocialAccountLinked');
    t.match(linked?.data, { provider: 'GOOGLE', subject: who.sub, email: who.email });
    t.equal(linked?.metadata.actor, me.body.data.id, 'the user is the actor');

    const reused = await verify({ state, code, iss });
    t.equal(reused.status, 400, 'the state works once');
    t.equal(reused.body.error.reason, 'INVALID_STATE');
  });

  await t.test('a registered email signs into its own account; social-status shows the link', async (t) => {
    const known = await signIn(app, 'known@gmail.test');
    const before = await api(app, 'GET', '/api/v1/users/me/social-status', { token: known.accessToken });
    t.same(before.body.data, { providers: [{ type: 'GOOGLE', linked: false }] });
    t.equal((await api(app, 'GET', '/api/v1/users/me/social-status')).status, 401, 'no session');
    const { state, code } = await authorize(account('known'));
    const res = await verify({ state, code }); // without iss: the configured issuer, the only one a state belongs to
    t.equal(res.status, 200);
    const me = await api(app, 'GET', '/api/v1/users/me', { token: res.body.data.tokens.accessToken });
    t.equal(me.body.data.id, known.userId, 'the same user');
    const after = await api(app, 'GET', '/api/v1/users/me/social-status', { token: known.accessToken });
    t.match(after.body.data, { providers: [{ type: 'GOOGLE', linked: true, email: 'known@gmail.test' }] });
  });

  await t.test('a forged, tampered or unknown state is 400; a missing code or state too', async (t) => {
    const { state, code } = await authorize(account('forger'));
    const [id, signature] = state.split('.');
    const flip = (s: string) => s.slice(0, -1) + (s.endsWith('a') ? 'b' : 'a');
    for (const forged of ['not-a-state', `${flip(id!)}.${signature}`, `${id}.${flip(signature!)}`, `${'A'.repeat(43)}.${'0'.repeat(64)}`]) {
      const res = await verify({ state: forged, code });
      t.equal(res.status, 400, forged);
      t.equal(res.body.error.reason, 'INVALID_STATE');
    }
    t.equal((await verify({ state })).status, 400, 'no code');
    t.equal((await verify({ code })).status, 400, 'no state');
    t.equal((await verify({ state, code })).status, 200, 'the genuine state still works');
  });

  await t.test('an expired state is 400', async (t) => {
    const { state, code } = await authorize(account('sleeper'));
    clock.advance(601_000);
    const res = await verify({ state, code });
    t.equal(res.status, 400);
    t.equal(res.body.error.reason, 'INVALID_STATE');
  });

  await t.test('an ID token whose nonce is not the state’s is refused: 400', async (t) => {
    const { state, code } = await authorize(account('replayed'), {}, (url) => url.searchParams.set('nonce', 'a-nonce-of-another-flow-0123456789abcdefghi'));
    const res = await verify({ state, code });
    t.equal(res.status, 400);
    t.equal(res.body.error.reason, 'SOCIAL_LOGIN_FAILED');
    t.equal((await loadState(app, userDecider, userIdForEmail('replayed@gmail.test'))).state.status, 'unregistered', 'nobody registered');
  });

  await t.test('a code issued for another PKCE challenge is refused: 400', async (t) => {
    const { state, code } = await authorize(account('intercepted'), {}, (url) =>
      url.searchParams.set('code_challenge', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'),
    );
    const res = await verify({ state, code });
    t.equal(res.status, 400);
    t.equal(res.body.error.reason, 'SOCIAL_LOGIN_FAILED');
  });

  await t.test('an iss that is not the provider’s is refused (RFC 9207): 400', async (t) => {
    const { state, code } = await authorize(account('mixup'));
    const res = await verify({ state, code, iss: 'https://attacker.example' });
    t.equal(res.status, 400);
    t.equal(res.body.error.reason, 'SOCIAL_LOGIN_FAILED');
  });

  await t.test('an email the provider did not verify finds no account and makes none: 400', async (t) => {
    const victim = await signIn(app, 'victim@gmail.test');
    const { state, code } = await authorize(account('victim', { sub: 'google-attacker', email_verified: false }));
    const res = await verify({ state, code });
    t.equal(res.status, 400);
    t.equal(res.body.error.reason, 'SOCIAL_EMAIL_UNVERIFIED');
    const status = await api(app, 'GET', '/api/v1/users/me/social-status', { token: victim.accessToken });
    t.same(status.body.data.providers[0], { type: 'GOOGLE', linked: false }, 'nothing linked to the victim');
  });

  await t.test('a user with MFA on gets mfaRequired and an mfaAccessToken, completed with a code', async (t) => {
    const [mia] = await manyUsers(app, 'mia', 1);
    const { secret } = (await api(app, 'POST', '/api/v1/users/me/mfa/enrol', { token: mia!.accessToken })).body.data;
    t.equal((await api(app, 'POST', '/api/v1/users/me/mfa/confirm', { token: mia!.accessToken, body: { code: totpAt(secret, clock.now()) } })).status, 200);
    clock.nextStep();
    const { state, code } = await authorize(account('mia-0', { email: 'mia-0@example.test' }), { redirectPath: '/home' });
    const res = await verify({ state, code });
    t.equal(res.status, 200);
    t.same(res.body.data, { tokens: { mfaAccessToken: res.body.data.tokens.mfaAccessToken }, mfaRequired: true, redirectPath: '/home' });
    const done = await api(app, 'POST', '/api/auth/mfa/verify', {
      headers: ua,
      body: { mfaAccessToken: res.body.data.tokens.mfaAccessToken, code: totpAt(secret, clock.now()) },
    });
    t.equal(done.status, 200);
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: done.body.data.tokens.accessToken })).body.data.id, mia!.userId);
  });

  await t.test('social login not configured: 400 SOCIAL_LOGIN_DISABLED; provider unreachable: 503', async (t) => {
    const variant = async (social?: ReturnType<typeof createSocialProvider>): Promise<Pick<TestApp, 'url'>> => {
      const mailer = { send: async () => {} };
      const { store, redis, ids, swaps, config } = app.deps;
      const other = await buildApp({ ...app.deps, dispatch: createDispatcher({ store, redis, mailer, ids, swaps, config, ...(social ? { social } : {}) }) });
      t.teardown(() => other.close());
      return { url: await other.listen({ port: 0, host: '127.0.0.1' }) };
    };
    const off = await variant();
    for (const [path, body] of [
      ['/api/auth/social/url', { type: 'GOOGLE', fingerprint: 'fp' }],
      ['/api/auth/social/verify', { state: 'x', code: 'y' }],
    ] as const) {
      const res = await api(off, 'POST', path, { body });
      t.equal(res.status, 400, path);
      t.equal(res.body.error.reason, 'SOCIAL_LOGIN_DISABLED');
      t.match(res.body.error.message, /not configured/);
    }
    const down = await variant(createSocialProvider({ issuer: 'http://127.0.0.1:1', clientId: 'c', clientSecret: 's', redirectUri: REDIRECT_URI }));
    const res = await api(down, 'POST', '/api/auth/social/url', { body: { type: 'GOOGLE', fingerprint: 'fp' } });
    t.equal(res.status, 503);
    t.equal(res.body.error.reason, 'IDENTITY_PROVIDER_UNAVAILABLE');
    const { state, code } = await authorize(account('unlucky')); // a state both processes share (one Redis)
    const late = await api(down, 'POST', '/api/auth/social/verify', { body: { state, code } });
    t.equal(late.status, 503, 'verify while the provider does not answer');
    t.equal(late.body.error.reason, 'IDENTITY_PROVIDER_UNAVAILABLE');
  });

  await t.test('no log line carries a state, a code, a token or the client secret', async (t) => {
    const logs = app.logs.join('\n');
    t.ok(app.logs.length > 0 && reveals.length > 20, `${reveals.length} values looked for in ${app.logs.length} lines`);
    t.same(
      reveals.filter((r) => r && logs.includes(r)),
      [],
      'none found',
    );
  });
});
