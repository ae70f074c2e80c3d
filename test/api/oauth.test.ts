// OAuth 2.1 end to end, as a connector and its user live it: discovery (RFC 8414), dynamic
// registration (RFC 7591), the authorization request with PKCE, the consent page in a real headless
// Chromium (sign-in by the emailed code, then approve or deny), the code exchange, calls to the API
// with the access token, introspection (RFC 7662) and GET /status; all through openid-client.
import { request } from 'node:http';
import t, { type Test } from 'tap';
import * as client from 'openid-client';
import { api } from '../support/app.ts';
import { manyUsers } from '../support/auth.ts';
import { SteppingClock, totpAt, wrongTotp } from '../support/mfa.ts';
import { authorizationRequest, browserProfile, callbackReached, registerClient, signInOnConsentPage, startOAuthTestBed } from '../support/oauth.ts';

t.test('OAuth 2.1 with the consent page', async (t) => {
  // The service's clock, moved a TOTP step at a time by the MFA sign-in below (codes computed from it).
  const clock = new SteppingClock();
  const { app, base, browser, callback } = await startOAuthTestBed(t, { clock, captureLogs: true });
  /** What the flows show once (codes, tokens, verifiers, secrets): none may reach a log line. */
  const reveals: string[] = [];

  await t.test('metadata lets a client connect unaided: RFC 8414, RFC 9728 and the directory record', async (t) => {
    const as = await api(app, 'GET', '/.well-known/oauth-authorization-server');
    t.equal(as.status, 200);
    t.match(as.body, {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      introspection_endpoint: `${base}/oauth/introspect`,
      registration_endpoint: `${base}/oauth/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    t.ok(as.body.scopes_supported.includes('profile:read'), 'the API scopes are listed');
    t.notOk(
      as.body.scopes_supported.some((s: string) => s.startsWith('admin:') || s === 'offline_access' || s === 'openid'),
      'no admin, offline_access or OpenID scope',
    );

    // The endpoints are the issuer's whatever Host or X-Forwarded-* the caller sends (cache poisoning).
    const spoofed = await new Promise<Record<string, string>>((resolve, reject) => {
      const req = request(
        `${base}/.well-known/oauth-authorization-server`,
        { headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' } },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk)).on('end', () => resolve(JSON.parse(text)));
        },
      );
      req.on('error', reject).end();
    });
    t.equal(spoofed.token_endpoint, `${base}/oauth/token`, 'not the Host the caller sent');
    t.equal(spoofed.registration_endpoint, `${base}/oauth/register`);
    t.equal(spoofed.authorization_endpoint, `${base}/oauth/authorize`);

    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api']) {
      const pr = await api(app, 'GET', path);
      t.equal(pr.status, 200, path);
      t.match(pr.body, { resource: `${base}/api`, authorization_servers: [base], bearer_methods_supported: ['header'] });
    }

    const dir = await api(app, 'GET', '/public/directory/connector.json');
    t.equal(dir.status, 200);
    t.match(dir.body, { authorizationUrl: `${base}/oauth/authorize`, tokenUrl: `${base}/oauth/token`, resource: `${base}/api` });
    t.ok(dir.body.recommendedScopes.length > 0 && dir.body.recommendedScopes.every((s: string) => s.endsWith(':read')), 'read-only scopes recommended');

    const docs = await api(app, 'GET', '/docs/json');
    for (const path of ['/oauth/authorize', '/oauth/token', '/oauth/introspect', '/oauth/register', '/status', '/.well-known/oauth-protected-resource']) {
      t.ok(docs.body.paths[path], `${path} in the OpenAPI document`);
    }
    t.equal((await api(app, 'GET', '/oauth/nothing-here')).body.error.reason, 'ROUTE_NOT_FOUND', 'other /oauth paths are ours: the envelope');

    const unauthenticated = await api(app, 'GET', '/api/v1/users/me');
    t.equal(unauthenticated.status, 401);
    t.equal(unauthenticated.headers.get('www-authenticate'), `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"`);
  });

  await t.test('register, sign in on the consent page, approve, exchange the code, call the API, introspect', async (t) => {
    const config = await registerClient(app, callback);
    const { client_id } = config.clientMetadata();
    const attempt = await authorizationRequest(config, { scope: 'profile:read agents:read admin:read', resource: `${base}/api` });
    const { page, context } = await browserProfile(browser);
    t.teardown(() => context.close());

    await page.goto(attempt.url.href);
    t.match(page.url(), `${base}/oauth/consent/`);
    t.match(await page.textContent('main'), 'Test connector');
    await signInOnConsentPage(app, page, 'oauth-user@example.com');
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const listed = await page.locator('ul.scopes code').allTextContents();
    t.same(listed, ['profile:read', 'marketplace:read'], 'the alias agents:read shows as marketplace:read; admin:read is not offered');
    const csp = (await page.context().request.get(page.url())).headers()['content-security-policy'];
    t.match(csp, "default-src 'none'");
    t.match(csp, "script-src 'none'", 'no script on the consent page');
    t.match(csp, "frame-ancestors 'none'");
    t.match(csp, `form-action 'self' ${new URL(callback.url).origin}`, "forms end here or at the client's redirect_uri");

    await page.getByRole('button', { name: 'Allow' }).click();
    const response = await callbackReached(callback, page);
    t.equal(response.searchParams.get('state'), attempt.state, 'state echoed');
    t.equal(response.searchParams.get('iss'), base, 'RFC 9207 iss in the authorization response');
    t.ok(response.searchParams.get('code'));

    const tokens = await client.authorizationCodeGrant(config, response, { pkceCodeVerifier: attempt.verifier, expectedState: attempt.state });
    reveals.push(response.searchParams.get('code')!, tokens.access_token, attempt.verifier);
    t.equal(tokens.token_type.toLowerCase(), 'bearer');
    t.equal(tokens.scope, 'profile:read marketplace:read', 'canonical scopes, no admin scope');
    t.equal(tokens.refresh_token, undefined, 'no refresh token');
    t.ok(tokens.expires_in && tokens.expires_in <= 3600);

    const me = await api(app, 'GET', '/api/v1/users/me', { token: tokens.access_token });
    t.equal(me.status, 200);
    t.equal(me.body.data.email, 'oauth-user@example.com');

    const introspected = await client.tokenIntrospection(config, tokens.access_token);
    t.match(introspected, { active: true, client_id, sub: me.body.data.id, scope: 'profile:read marketplace:read', aud: `${base}/api` });

    const status = await api(app, 'GET', '/status', { token: tokens.access_token });
    t.equal(status.status, 200);
    t.same(Object.keys(status.body.data).sort(), ['active', 'client_id', 'exp', 'scope', 'sub']);
    t.match(status.body.data, { active: true, sub: me.body.data.id, client_id, scope: 'profile:read marketplace:read', exp: introspected.exp });
    t.same((await api(app, 'GET', '/status', { token: 'not-a-token-of-ours-0123456789' })).body.data, { active: false });
    t.same((await api(app, 'GET', '/status')).body.data, { active: false });

    const patch = await api(app, 'PATCH', '/api/v1/users/me', { token: tokens.access_token, body: { languageCode: 'de' } });
    t.equal(patch.status, 403, 'profile:write was not granted');
    t.equal(patch.body.error.reason, 'INSUFFICIENT_SCOPE');
    t.match(patch.headers.get('www-authenticate'), 'error="insufficient_scope", scope="profile:write"');
  });

  /** A user who turned MFA on, signed in by emailed code on the consent page of a new authorization request: the page now asks for the second factor. */
  const mfaUserOnConsentPage = async (t: Test, name: string) => {
    const [user] = await manyUsers(app, name, 1);
    const { secret } = (await api(app, 'POST', '/api/v1/users/me/mfa/enrol', { token: user!.accessToken })).body.data;
    const usedCode = totpAt(secret, clock.now());
    const confirmed = await api(app, 'POST', '/api/v1/users/me/mfa/confirm', { token: user!.accessToken, body: { code: usedCode } });
    t.equal(confirmed.status, 200, 'MFA on');
    const config = await registerClient(app, callback);
    const attempt = await authorizationRequest(config, { scope: 'profile:read' });
    const { page, context } = await browserProfile(browser);
    t.teardown(() => context.close());
    await page.goto(attempt.url.href);
    const email = `${name}-0@example.test`;
    await signInOnConsentPage(app, page, email);
    return { email, secret, usedCode, codes: confirmed.body.data.recoveryCodes as string[], config, attempt, page };
  };

  await t.test(
    'a user with MFA on completes the sign-in with a TOTP code on the page: wrong and reused codes shown on the form, the token never in the page',
    async (t) => {
      const { email, secret, usedCode, config, attempt, page } = await mfaUserOnConsentPage(t, 'oauth-mfa');
      await page.getByLabel('Authenticator code').waitFor();
      const html = await page.content();
      t.notMatch(html, /mfa_[A-Za-z0-9_-]{20,}/, 'the mfaAccessToken stays on the server');
      const uid = new URL(page.url()).pathname.split('/').at(-2)!; // the page answered the post to …/consent/{uid}/verify
      const heldKey = `oauth:consent-mfa:${uid}`;
      const sealed = await app.deps.redis.get(heldKey);
      t.ok(sealed?.startsWith('v1.'), 'held under the interaction, sealed');
      t.notMatch(sealed, /mfa_/, 'never in the clear in Redis');

      const submit = async (code: string) => {
        await page.getByLabel('Authenticator code').fill(code);
        await page.getByRole('button', { name: 'Verify' }).click();
        await page.waitForLoadState();
      };
      await submit(wrongTotp(secret, clock.now()));
      t.match(await page.getByRole('alert').textContent(), 'invalid TOTP code', 'a wrong code: the TOTP step again, with the reason');
      await submit(usedCode);
      t.match(await page.getByRole('alert').textContent(), 'already used', 'the confirming code is spent (TOTP replay)');

      await page.goto(`${base}/oauth/consent/${uid}`);
      t.ok(await page.getByLabel('Authenticator code').isVisible(), 'the page opened again shows the TOTP step while its token lives');

      clock.nextStep();
      await submit(totpAt(secret, clock.now()));
      await page.getByRole('button', { name: 'Allow' }).click();
      const response = await callbackReached(callback, page);
      const tokens = await client.authorizationCodeGrant(config, response, { pkceCodeVerifier: attempt.verifier, expectedState: attempt.state });
      reveals.push(response.searchParams.get('code')!, tokens.access_token, attempt.verifier, secret);
      const me = await api(app, 'GET', '/api/v1/users/me', { token: tokens.access_token });
      t.equal(me.body.data.email, email, "the token is the MFA user's");
      t.equal(await app.deps.redis.exists(heldKey), 0, 'the held token is gone once used');
      const logs = app.logs.join('\n');
      t.equal(logs.match(/mfa_[A-Za-z0-9_-]{43}/g), null, 'no mfaAccessToken in any log line');
      t.same(
        reveals.filter((r) => logs.includes(r)),
        [],
        'no code, access token, verifier or TOTP secret in any log line either',
      );
    },
  );

  await t.test('the TOTP step takes a recovery code instead: a wrong one shown on the form, a right one signs in and is spent', async (t) => {
    const { email, secret, codes, config, attempt, page } = await mfaUserOnConsentPage(t, 'oauth-recovery');
    t.equal(codes.length, 10, 'MFA on, with its recovery codes');
    const submit = async (code: string) => {
      await page.getByLabel('Recovery code').fill(code);
      await page.getByRole('button', { name: 'Use recovery code' }).click();
      await page.waitForLoadState();
    };
    await submit('aaaaa-aaaaa');
    t.match(await page.getByRole('alert').textContent(), 'invalid recovery code', 'a wrong code: the step again, with the reason');
    t.ok(await page.getByLabel('Authenticator code').isVisible(), 'the TOTP form is still there too');
    await submit(codes[3]!.toUpperCase());
    await page.getByRole('button', { name: 'Allow' }).click();
    const response = await callbackReached(callback, page);
    const tokens = await client.authorizationCodeGrant(config, response, { pkceCodeVerifier: attempt.verifier, expectedState: attempt.state });
    reveals.push(response.searchParams.get('code')!, tokens.access_token, attempt.verifier, secret, ...codes);
    const me = await api(app, 'GET', '/api/v1/users/me', { token: tokens.access_token });
    t.match(me.body.data, { email, mfaRecoveryCodesLeft: 9 }, 'signed in with the recovery code, which is spent');
    const logs = app.logs.join('\n');
    t.same(
      reveals.filter((r) => logs.includes(r)),
      [],
      'no recovery code (nor code, token, verifier, secret) in any log line',
    );
  });
}).catch(t.threw);
