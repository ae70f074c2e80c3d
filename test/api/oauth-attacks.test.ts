// The OAuth rows of the attack table, each tried as an attacker (or a careless client) would, against
// the real app with a real client library and a real browser: PKCE verifier mismatch, code reuse,
// redirect_uri change, state tampering, expired code, consent CSRF, admin and unknown scopes, a scope
// the token lacks; plus the RFC 7636 appendix B vector through the provider's S256, the token
// response's shape and headers, no refresh grant, and a second API process sharing the records.
import t from 'tap';
import * as client from 'openid-client';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../api/app.ts';
import { loginKeys } from '../../commands/users/login-codes.ts';
import { userIdForEmail } from '../../infra/tokens.ts';
import { api, apiWithConfig } from '../support/app.ts';
import { codeOf, resetLookupThrottle } from '../support/auth.ts';
import {
  authorizationRequest,
  browserProfile,
  callbackReached,
  registerClient,
  signInOnConsentPage,
  startOAuthTestBed,
  type AuthorizationAttempt,
} from '../support/oauth.ts';

/** The OAuth error code a client library call was refused with (RFC 6749 §5.2); null when it succeeded. */
async function oauthError(call: Promise<unknown>): Promise<string | null> {
  try {
    await call;
    return null;
  } catch (err) {
    return (err as { error?: string }).error ?? String(err);
  }
}

const RFC7636_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC7636_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

t.test('OAuth attack table', async (t) => {
  const { app, base, browser, callback: clientSide } = await startOAuthTestBed(t);
  const profile = await browserProfile(browser);
  const CALLBACK = clientSide.url;
  const config = await registerClient(app, clientSide);
  const { client_id } = config.clientMetadata();

  /** The browser goes through the authorization request; where it lands at the client. */
  const authorize = async (attempt: AuthorizationAttempt) => {
    await profile.page.goto(attempt.url.href);
    return callbackReached(clientSide, profile.page);
  };
  // The user signs in and approves profile:read once; later requests for it come straight back with a code.
  const first = await authorizationRequest(config);
  await profile.page.goto(first.url.href);
  await signInOnConsentPage(app, profile.page, 'victim@example.com');
  await profile.page.getByRole('button', { name: 'Allow' }).click();
  await callbackReached(clientSide, profile.page);
  const fresh = async (params: Record<string, string> = {}) => {
    const attempt = await authorizationRequest(config, params);
    return { attempt, callback: await authorize(attempt) };
  };
  const exchange = (callback: URL, attempt: AuthorizationAttempt, verifier = attempt.verifier) =>
    client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: attempt.state });
  /** The token endpoint as raw HTTP (form-encoded), to see its status and headers. */
  const tokenRequest = (fields: Record<string, string>) =>
    fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id, ...fields }),
    });

  await t.test('RFC 7636 appendix B: the provider derives the same S256 challenge from the verifier', async (t) => {
    t.equal(await client.calculatePKCECodeChallenge(RFC7636_VERIFIER), RFC7636_CHALLENGE, 'the client library agrees with the RFC');
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'profile:read',
      code_challenge: RFC7636_CHALLENGE,
      code_challenge_method: 'S256',
      state: 'rfc7636',
    });
    const callback = await authorize({ url, state: 'rfc7636', verifier: RFC7636_VERIFIER });
    const res = await tokenRequest({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: CALLBACK,
      code_verifier: RFC7636_VERIFIER,
    });
    t.equal(res.status, 200);
    t.equal(res.headers.get('cache-control'), 'no-store');
    const body = (await res.json()) as Record<string, unknown>;
    t.same(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type'], 'no refresh token, no id token');
    t.equal(body.token_type, 'Bearer');
  });

  await t.test('PKCE: a wrong verifier is invalid_grant; plain and missing challenges are refused', async (t) => {
    const { attempt, callback } = await fresh();
    t.equal(await oauthError(exchange(callback, attempt, client.randomPKCECodeVerifier())), 'invalid_grant');
    // RFC 7636 §4.1: 43 to 128 characters of [A-Za-z0-9-._~]; each malformed verifier on a fresh code of its own.
    for (const [what, verifier, reason] of [
      ['42 characters', 'a'.repeat(42), 'minimum length of 43'],
      ['129 characters', 'a'.repeat(129), 'maximum length of 128'],
      ['a character outside the set', `${'a'.repeat(42)}+`, 'invalid characters'],
    ] as const) {
      const { callback: own } = await fresh();
      const res = await tokenRequest({
        grant_type: 'authorization_code',
        code: own.searchParams.get('code')!,
        redirect_uri: CALLBACK,
        code_verifier: verifier,
      });
      t.equal(res.status, 400, `a verifier of ${what} is refused`);
      t.match(await res.json(), { error: 'invalid_request', error_description: reason }, what);
    }

    const plain = await authorizationRequest(config, { code_challenge_method: 'plain' });
    plain.url.searchParams.set('code_challenge', plain.verifier);
    const refusedPlain = await authorize(plain);
    t.equal(refusedPlain.searchParams.get('error'), 'invalid_request', 'plain is not supported');
    t.equal(refusedPlain.searchParams.get('state'), plain.state);

    const none = await authorizationRequest(config);
    none.url.searchParams.delete('code_challenge');
    none.url.searchParams.delete('code_challenge_method');
    t.equal((await authorize(none)).searchParams.get('error'), 'invalid_request', 'PKCE is required');
  });

  await t.test('a code gets one try: after a wrong code_verifier or a changed redirect_uri, the right request is invalid_grant too', async (t) => {
    const { attempt, callback } = await fresh();
    t.equal(await oauthError(exchange(callback, attempt, client.randomPKCECodeVerifier())), 'invalid_grant', 'a wrong verifier');
    t.equal(await oauthError(exchange(callback, attempt)), 'invalid_grant', 'then the right one: the code is spent');
    const { attempt: other, callback: otherCallback } = await fresh();
    const changed = await tokenRequest({
      grant_type: 'authorization_code',
      code: otherCallback.searchParams.get('code')!,
      redirect_uri: clientSide.other,
      code_verifier: other.verifier,
    });
    t.equal(changed.status, 400, 'another registered redirect_uri');
    t.equal(await oauthError(exchange(otherCallback, other)), 'invalid_grant', 'then the right request: the code is spent');
    const next = await fresh();
    t.ok((await exchange(next.callback, next.attempt)).access_token, 'the grant stays: the next request comes straight back and its code works');
  });

  await t.test('a code works once: reuse is invalid_grant and revokes what the first exchange got', async (t) => {
    const { attempt, callback } = await fresh();
    const tokens = await exchange(callback, attempt);
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: tokens.access_token })).status, 200);
    t.equal(await oauthError(exchange(callback, attempt)), 'invalid_grant');
    t.same((await api(app, 'GET', '/status', { token: tokens.access_token })).body.data, { active: false });
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: tokens.access_token })).status, 401);
    // The whole grant went with it: the user is asked again.
    await profile.page.goto((await authorizationRequest(config)).url.href);
    await profile.page.getByRole('button', { name: 'Allow' }).click();
    await callbackReached(clientSide, profile.page);
  });

  await t.test('redirect_uri: an unregistered one is refused without redirecting; a changed one at the token endpoint is invalid_grant', async (t) => {
    const attempt = await authorizationRequest(config, { redirect_uri: 'http://attacker.test/steal' });
    const res = await fetch(attempt.url, { redirect: 'manual' });
    t.equal(res.status, 400);
    t.equal(res.headers.get('location'), null, 'never redirected to the attacker');
    t.match(await res.text(), 'redirect_uri');

    const { attempt: ok, callback } = await fresh();
    const changed = await tokenRequest({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: clientSide.other,
      code_verifier: ok.verifier,
    });
    t.equal(changed.status, 400);
    t.equal(((await changed.json()) as { error: string }).error, 'invalid_grant', 'even another redirect_uri registered by the same client');
  });

  await t.test('state: echoed exactly, and a tampered one is caught by the client before any exchange', async (t) => {
    const odd = 'a b/c?d=e&f=%25+ü';
    const { attempt, callback } = await fresh({ state: odd });
    t.equal(callback.searchParams.get('state'), odd, 'byte for byte');
    const tampered = new URL(callback);
    tampered.searchParams.set('state', `${odd}x`);
    const refused = await exchange(tampered, attempt).catch((err: Error) => err);
    t.match(String((refused as Error).cause), /unexpected "state"/);
    t.ok((await exchange(callback, attempt)).access_token, 'the untampered response still works: nothing was sent');
  });

  await t.test('an expired code is invalid_grant; codes live OAUTH_CODE_TTL_SECONDS (60 s)', async (t) => {
    const { attempt, callback } = await fresh();
    const code = callback.searchParams.get('code')!;
    const { rows } = await app.deps.pool.query<{ lifetime: number }>(
      `SELECT (payload->>'exp')::int - (payload->>'iat')::int AS lifetime FROM oauth_records WHERE model = 'AuthorizationCode' AND id = $1`,
      [code],
    );
    t.equal(rows[0]?.lifetime, 60);
    await app.deps.pool.query(`UPDATE oauth_records SET expires_at = now() - interval '1 second' WHERE model = 'AuthorizationCode' AND id = $1`, [code]);
    t.equal(await oauthError(exchange(callback, attempt)), 'invalid_grant');
  });

  await t.test('consent CSRF: posts without the token, with a wrong one or from another site are refused; deny answers access_denied', async (t) => {
    const attempt = await authorizationRequest(config, { scope: 'wallet:read' });
    await profile.page.goto(attempt.url.href);
    await profile.page.getByRole('button', { name: 'Deny' }).waitFor();
    const confirm = `${profile.page.url()}/confirm`;
    const csrf = await profile.page.locator('input[name=csrf]').inputValue();
    const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      profile.context.request.post(confirm, { form, headers, maxRedirects: 0 });
    for (const [what, res] of [
      ['no token', await post({ decision: 'approve' })],
      ['a wrong token', await post({ decision: 'approve', csrf: `${csrf.slice(0, -2)}xx` })],
      ['another site', await post({ decision: 'approve', csrf }, { origin: 'http://attacker.test' })],
    ] as const) {
      t.equal(res.status(), 403, what);
      t.match(res.headers()['content-type'], 'text/html');
    }
    t.equal(clientSide.received.length, 0, 'nothing reached the client');
    await profile.page.getByRole('button', { name: 'Deny' }).click();
    const denied = await callbackReached(clientSide, profile.page);
    t.equal(denied.searchParams.get('error'), 'access_denied');
    t.equal(denied.searchParams.get('state'), attempt.state);
    t.equal(denied.searchParams.get('iss'), base);
    t.equal(denied.searchParams.get('code'), null);
  });

  await t.test(
    'the consent page spends no account’s code budget without a captcha: codes only for the email this sign-in looked up, three tries a lookup',
    async (t) => {
      const target = 'locked-out@example.test';
      const stranger = await browserProfile(browser);
      t.teardown(() => stranger.context.close());
      await stranger.page.goto((await authorizationRequest(config)).url.href);
      const uid = new URL(stranger.page.url()).pathname.split('/').at(-1)!;
      const csrf = await stranger.page.locator('input[name=csrf]').inputValue();
      const verify = (email: string, code: string) =>
        stranger.context.request.post(`${base}/oauth/consent/${uid}/verify`, { form: { csrf, email, code }, maxRedirects: 0 });
      const failures = async () => Number((await app.deps.redis.get(loginKeys(userIdForEmail(target)).failures)) ?? 0);
      // The victim asked for a code through the API meanwhile: a code waits, so wrong ones would count.
      t.equal((await api(app, 'POST', '/api/auth/lookup', { body: { email: target, recaptcha: 'tok', fingerprint: 'fp' } })).status, 200);
      await app.waitForMail(target);
      for (let i = 0; i < 6; i++) {
        const res = await verify(target, '000000');
        t.equal(res.status(), 400, `try ${i + 1}: refused without looking at the code`);
        t.match(await res.text(), 'Ask for a new code');
      }
      t.equal(await failures(), 0, 'the account counted none of them');

      // With a lookup of its own (captcha passed), the page allows three tries, then asks for a new code.
      const keys = loginKeys(userIdForEmail(target));
      await resetLookupThrottle(app, target); // one code per 30 s: the victim's lookup just had one
      await stranger.page.getByLabel('Email').fill(target);
      await stranger.page.getByRole('button', { name: 'Email me a code' }).click();
      await stranger.page.getByLabel('Code').waitFor();
      const code = codeOf(await app.waitForMail(target));
      const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await verify(target, wrong));
      t.same(
        answers.map((a) => a.status()),
        [400, 400, 429, 400, 400],
        'the third wrong code also reaches the limit of this address for that email',
      );
      t.match(await answers[2]!.text(), 'too many wrong codes for this email from this address');
      t.equal(await failures(), 3, 'three counted, then the page wants a new lookup');
      t.equal(await app.deps.redis.exists(keys.lock), 0, 'the account is not locked');
      t.equal((await verify(target, code)).status(), 400, 'even the right code needs a new lookup now');
    },
  );

  await t.test('scopes: admin and key management ones are never granted, unknown ones are invalid_scope, aliases become canonical', async (t) => {
    const { attempt, callback } = await fresh({ scope: 'admin:read profile:read admin:*' });
    const tokens = await exchange(callback, attempt);
    t.equal(tokens.scope, 'profile:read', 'admin scopes dropped');
    t.equal((await api(app, 'GET', '/api/admin/audit/pools', { token: tokens.access_token })).status, 403);
    for (const scope of ['admin:read', 'profile:read launch:missiles', 'openid']) {
      const refused = await authorize(await authorizationRequest(config, { scope }));
      t.equal(refused.searchParams.get('error'), 'invalid_scope', scope);
      t.equal(refused.searchParams.get('iss'), base);
    }
    const { attempt: offline, callback: offlineCallback } = await fresh({ scope: 'offline_access profile:read' });
    const offlineTokens = await exchange(offlineCallback, offline);
    t.equal(offlineTokens.scope, 'profile:read', 'offline_access is dropped');
    t.equal(offlineTokens.refresh_token, undefined);
    // Key management is never granted through OAuth: a connector approved for an hour must not mint a key that outlives its token.
    const { attempt: keys, callback: keysCallback } = await fresh({ scope: 'keys:write profile:read keys:*' });
    const keysTokens = await exchange(keysCallback, keys);
    t.equal(keysTokens.scope, 'profile:read', 'keys scopes dropped');
    const mint = await api(app, 'POST', '/api/api-keys', { token: keysTokens.access_token, body: { name: 'from a connector' } });
    t.equal(mint.status, 403, 'the key routes refuse an OAuth token');
    t.equal(mint.body.error.reason, 'INSUFFICIENT_SCOPE');
    t.equal(
      (await authorize(await authorizationRequest(config, { scope: 'keys:read' }))).searchParams.get('error'),
      'invalid_scope',
      'keys scopes alone: invalid_scope',
    );
    // A request that names no scope gets the least one, as OAuth 2.1 allows (MCP clients and the conformance runner send none).
    const { attempt: unscoped, callback: unscopedCallback } = await fresh({ scope: '' });
    t.equal((await exchange(unscopedCallback, unscoped)).scope, 'profile:read', 'no scope: profile:read');
    const { attempt: onlyOffline, callback: onlyOfflineCallback } = await fresh({ scope: 'offline_access' });
    t.equal((await exchange(onlyOfflineCallback, onlyOffline)).scope, 'profile:read', 'offline_access alone is dropped, leaving no scope: profile:read');
    const { attempt: legacy, callback: legacyCallback } = await fresh({ scope: 'user:read' });
    t.equal((await exchange(legacyCallback, legacy)).scope, 'profile:read', 'user:read is profile:read');
  });

  await t.test('tokens are bound to the API (RFC 8707): another resource is invalid_target', async (t) => {
    const refused = await authorize(await authorizationRequest(config, { resource: 'http://attacker.test/api' }));
    t.equal(refused.searchParams.get('error'), 'invalid_target');
    const { attempt, callback } = await fresh({ resource: `${base}/api` });
    t.equal((await client.tokenIntrospection(config, (await exchange(callback, attempt)).access_token)).aud, `${base}/api`);
  });

  await t.test('no refresh grant: neither at the token endpoint nor in a registration', async (t) => {
    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: 'anything' });
    t.equal(refresh.status, 400);
    t.equal(((await refresh.json()) as { error: string }).error, 'unsupported_grant_type');
    t.equal(await oauthError(registerClient(app, clientSide, { grant_types: ['authorization_code', 'refresh_token'] })), 'invalid_client_metadata');
  });

  await t.test('rate limits: an OAuth user has one budget across tokens and clients', async (t) => {
    const { attempt, callback } = await fresh();
    const first = await exchange(callback, attempt);
    const { attempt: again, callback: againCallback } = await fresh();
    const second = await exchange(againCallback, again);
    const userId = (await api(app, 'GET', '/api/v1/users/me', { token: first.access_token })).body.data.id;
    await app.deps.redis.del(`ratelimit:oauth:${userId}`); // the calls above counted at the test app's high limit
    const limited = await apiWithConfig(app, { RATE_LIMIT_FREE_PER_MIN: 3 });
    t.teardown(() => limited.close());
    const answers = [];
    for (const token of [first, second, first, second]) answers.push(await api(limited, 'GET', '/api/v1/users/me', { token: token.access_token }));
    t.same(
      answers.map((a) => a.status),
      [200, 200, 200, 429],
      'three a minute for a free user, whichever token',
    );
    t.same(
      answers.map((a) => a.headers.get('x-ratelimit-remaining')),
      ['2', '1', '0', '0'],
    );
    t.equal(answers[3]!.body.error.reason, 'RATE_LIMITED');
    t.ok(Number(answers[3]!.headers.get('retry-after')) > 0, 'Retry-After');
  });

  await t.test('another API process accepts the token (records in PostgreSQL); another client cannot introspect it', async (t) => {
    const { attempt, callback } = await fresh();
    const tokens = await exchange(callback, attempt);
    const second = await buildApp(app.deps);
    t.teardown(() => second.close());
    await second.listen({ port: 0, host: '127.0.0.1' });
    const other = { url: `http://127.0.0.1:${(second.server.address() as AddressInfo).port}` };
    t.equal((await api(other, 'GET', '/api/v1/users/me', { token: tokens.access_token })).status, 200);
    t.equal((await api(other, 'GET', '/status', { token: tokens.access_token })).body.data.active, true);
    const stranger = await registerClient(app, clientSide, { client_name: 'Another connector' });
    t.same(await client.tokenIntrospection(stranger, tokens.access_token), { active: false });
  });
}).catch(t.threw);
