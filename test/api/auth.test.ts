import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildApp } from '../../api/app.ts';
import { api, startTestApp, type TestApp } from '../support/app.ts';
import { codeOf, signIn, TEST_USER_AGENT } from '../support/auth.ts';
import { SteppingClock } from '../support/mfa.ts';

const ua = { 'user-agent': TEST_USER_AGENT };
const lookupBody = (email: string, extra: Record<string, unknown> = {}) => ({ email, recaptcha: 'tok', fingerprint: 'fp', ...extra });
const lookup = (app: TestApp, email: string, extra: Record<string, unknown> = {}) =>
  api(app, 'POST', '/api/auth/lookup', { headers: ua, body: lookupBody(email, extra) });
const verify = (app: TestApp, email: string, code: string, headers: Record<string, string> = ua) =>
  api(app, 'POST', '/api/auth/verify', { headers, body: { email, code, recaptcha: 'tok' } });
const refresh = (app: TestApp, refreshToken: string, userAgent = TEST_USER_AGENT) =>
  api(app, 'POST', '/api/auth/refresh', { headers: { 'user-agent': userAgent }, body: { refreshToken } });
const secondsFromNow = (iso: string) => (new Date(iso).getTime() - Date.now()) / 1000;
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

// With TRUST_PROXY=1 a test chooses its client address in X-Forwarded-For (127.0.0.1 without it).
const from = (address: string) => ({ ...ua, 'x-forwarded-for': address });
/** The access token's claims signed again with `alg` under `secret` (a forgery by whoever holds the secret, or a client choosing the algorithm). */
function resigned(token: string, alg: 'HS256' | 'HS384' | 'HS512' | 'none', secret: string): string {
  const header = Buffer.from(JSON.stringify({ alg, typ: 'JWT' })).toString('base64url');
  const body = `${header}.${token.split('.')[1]}`;
  if (alg === 'none') return `${body}.`;
  return `${body}.${createHmac(`sha${alg.slice(2)}`, secret)
    .update(body)
    .digest('base64url')}`;
}

t.test('auth routes', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'boss@example.com,chief@example.com', TRUST_PROXY: '1' } });
  t.teardown(() => app.close());

  await t.test('username-exists answers 400 without a username, then false / true case-insensitively', async (t) => {
    t.equal((await api(app, 'GET', '/api/auth/username-exists')).status, 400);
    t.same((await api(app, 'GET', '/api/auth/username-exists?username=Ueno')).body, { success: true, data: { exists: false } });
    await signIn(app, 'ueno@example.com', { username: 'Ueno' });
    t.same((await api(app, 'GET', '/api/auth/username-exists?username=ueno')).body.data, { exists: true });
  });

  await t.test('lookup of a new email mails a registration code and never returns it', async (t) => {
    const res = await lookup(app, 'New.Person@Example.com ');
    t.equal(res.status, 200);
    t.equal(res.body.data.isNewUser, true);
    t.equal(res.body.data.codeSentTo, 'n***@example.com');
    t.ok(secondsFromNow(res.body.data.nextRequestAt) > 25, 'nextRequestAt about 30 s ahead');
    const mail = await app.waitForMail('new.person@example.com');
    t.match(mail.subject, /registration code/);
    t.notOk(JSON.stringify(res.body).includes(codeOf(mail)), 'the code is only in the mail');
  });

  await t.test('lookup of a registered email mails a sign-in code', async (t) => {
    const { userId } = await signIn(app, 'known@example.com');
    await app.deps.redis.del(`auth:lookup-recent:${userId}`); // as if 30 s had passed since signing in
    const again = await lookup(app, 'known@example.com');
    t.equal(again.status, 200);
    t.equal(again.body.data.isNewUser, false);
    t.match((await app.waitForMail('known@example.com')).subject, /sign-in code/);
  });

  await t.test('lookup validates its body: 400', async (t) => {
    const bad = await api(app, 'POST', '/api/auth/lookup', { body: { email: 'not-an-email', fingerprint: 'fp' } });
    t.equal(bad.status, 400);
    t.equal(bad.body.error.code, 'BAD_REQUEST');
    t.equal((await api(app, 'POST', '/api/auth/lookup', { body: { email: 'a@example.com' } })).status, 400, 'fingerprint required');
    t.equal((await lookup(app, 'b@example.com', { username: 'x' })).status, 400, 'username too short');
  });

  await t.test('lookup for a new user with a taken username is 400', async (t) => {
    await signIn(app, 'holder@example.com', { username: 'holder' });
    const res = await lookup(app, 'other@example.com', { username: 'HOLDER' });
    t.equal(res.status, 400);
    t.match(res.body.error.message, /taken/);
  });

  await t.test('a second lookup within 30 s is 429 with nextRequestAt', async (t) => {
    t.equal((await lookup(app, 'eager@example.com')).status, 200);
    const res = await lookup(app, 'eager@example.com');
    t.equal(res.status, 429);
    t.equal(res.body.success, false);
    t.equal(res.body.error.code, 'TOO_MANY_REQUESTS');
    const wait = secondsFromNow(res.body.error.nextRequestAt);
    t.ok(wait > 20 && wait <= 30, `nextRequestAt ${wait} s ahead`);
  });

  await t.test('more than 5 lookups in an hour is 429 until the hour ends', async (t) => {
    const email = 'hourly@example.com';
    const { userId } = await signIn(app, email); // one lookup
    for (let i = 2; i <= 5; i++) {
      await app.deps.redis.del(`auth:lookup-recent:${userId}`); // as if 30 s had passed
      t.equal((await lookup(app, email)).status, 200, `lookup ${i}`);
    }
    await app.deps.redis.del(`auth:lookup-recent:${userId}`);
    const res = await lookup(app, email);
    t.equal(res.status, 429);
    t.ok(secondsFromNow(res.body.error.nextRequestAt) > 3000, 'retry after about an hour');
  });

  await t.test('verify returns tokens and the code works once', async (t) => {
    t.equal((await lookup(app, 'once@example.com')).status, 200);
    const code = codeOf(await app.waitForMail('once@example.com'));
    const res = await verify(app, 'once@example.com', code);
    t.equal(res.status, 200);
    t.equal(res.body.data.mfaRequired, false);
    t.type(res.body.data.tokens.accessToken, 'string');
    t.type(res.body.data.tokens.refreshToken, 'string');
    const me = await api(app, 'GET', '/api/v1/users/me', { token: res.body.data.tokens.accessToken });
    t.equal(me.body.data.email, 'once@example.com');
    t.equal((await verify(app, 'once@example.com', code)).status, 400, 'a used code is refused');
  });

  await t.test('verify answers 400 for a wrong code and for an invalid body', async (t) => {
    t.equal((await lookup(app, 'wrong@example.com')).status, 200);
    const code = codeOf(await app.waitForMail('wrong@example.com'));
    const res = await verify(app, 'wrong@example.com', wrongCode(code));
    t.equal(res.status, 400);
    t.match(res.body.error.message, /invalid or expired code/);
    t.equal((await verify(app, 'wrong@example.com', '12ab')).status, 400);
    t.equal((await api(app, 'POST', '/api/auth/verify', { body: { code } })).status, 400, 'email missing');
    t.equal((await verify(app, 'wrong@example.com', code)).status, 200, 'the right code still works');
  });

  await t.test('five wrong codes from one address refuse that address for that email, not the owner: from the third on, 429 ADDRESS_LOCKED', async (t) => {
    const email = 'targeted@example.com';
    const attacker = from('203.0.113.50');
    t.equal((await api(app, 'POST', '/api/auth/lookup', { headers: attacker, body: lookupBody(email) })).status, 200, 'the one lookup a stranger needs');
    const code = codeOf(await app.waitForMail(email));
    const answers = [];
    for (let i = 1; i <= 5; i++) answers.push(await verify(app, email, wrongCode(code), attacker));
    t.same(
      answers.map((a) => a.status),
      [400, 400, 429, 429, 429],
    );
    t.same(
      answers.slice(2).map((a) => a.body.error.reason),
      ['ADDRESS_LOCKED', 'ADDRESS_LOCKED', 'ADDRESS_LOCKED'],
    );
    const wait = secondsFromNow(answers[2]!.body.error.nextRequestAt);
    t.ok(wait > 14 * 60 && wait <= 15 * 60, `that address waits ${wait} s`);
    const rightFromThere = await verify(app, email, code, attacker);
    t.equal(rightFromThere.body.error?.reason, 'ADDRESS_LOCKED', 'even the right code from that address: it learns nothing more');
    const owner = await verify(app, email, code, from('198.51.100.20'));
    t.equal(owner.status, 200, 'the owner signs in with the code from another address');
    t.equal(owner.body.data.mfaRequired, false);
  });

  await t.test(
    'wrong codes from many addresses still lock the email: three per address, the tenth (from a fourth address) locks it for everybody for 15 minutes',
    async (t) => {
      const email = 'guesser@example.com';
      t.equal((await lookup(app, email)).status, 200);
      const code = codeOf(await app.waitForMail(email));
      for (const address of ['203.0.113.61', '203.0.113.62', '203.0.113.63']) {
        const statuses = [];
        for (let i = 1; i <= 3; i++) statuses.push((await verify(app, email, wrongCode(code), from(address))).status);
        t.same(statuses, [400, 400, 429], `${address}: two wrong codes, the third refuses it`);
      }
      const locked = await verify(app, email, wrongCode(code), from('203.0.113.64'));
      t.equal(locked.status, 429);
      t.match(locked.body.error, { code: 'TOO_MANY_REQUESTS', reason: 'ACCOUNT_LOCKED' });
      const wait = secondsFromNow(locked.body.error.nextRequestAt);
      t.ok(wait > 14 * 60 && wait <= 15 * 60, `locked for ${wait} s`);
      const owner = await verify(app, email, code, from('198.51.100.21'));
      t.equal(owner.body.error?.reason, 'ACCOUNT_LOCKED', 'even the right code from an address that never guessed');
      t.equal(
        (await api(app, 'POST', '/api/auth/lookup', { headers: from('198.51.100.21'), body: lookupBody(email) })).status,
        429,
        'no new code while locked',
      );
    },
  );

  await t.test('registration keeps the signup fields; ADMIN_EMAILS makes an administrator', async (t) => {
    const boss = await signIn(app, 'Boss@Example.com', { username: 'the_boss' });
    const me = await api(app, 'GET', '/api/v1/users/me', { token: boss.accessToken });
    t.match(me.body.data, { email: 'boss@example.com', username: 'the_boss', role: 'admin', tier: 'free', virtualWalletMode: true, languageCode: 'en' });
    t.equal((await lookup(app, 'fan@example.com', { agreedToTerms: true, receiveMarketingOffers: false, referrerUsername: 'the_boss' })).status, 200);
    const res = await verify(app, 'fan@example.com', codeOf(await app.waitForMail('fan@example.com')));
    const fan = await api(app, 'GET', '/api/v1/users/me', { token: res.body.data.tokens.accessToken });
    t.match(fan.body.data, { role: 'user', agreedToTerms: true, receiveMarketingOffers: false });
    t.match(fan.body.data.username, /^user_[0-9a-f]{10}$/, 'a username is derived when none was given');
  });

  await t.test(
    'a client that keeps its sign-in refresh token stays signed in: ten refreshes (three at once) all give working access tokens and the same refresh token',
    async (t) => {
      const first = await signIn(app, 'keeper@example.com');
      const answers = [];
      for (let i = 0; i < 7; i++) answers.push(await refresh(app, first.refreshToken));
      answers.push(...(await Promise.all([1, 2, 3].map(() => refresh(app, first.refreshToken)))));
      t.same(
        answers.map((r) => r.status),
        Array(10).fill(200),
        'every refresh with the sign-in token succeeds',
      );
      t.ok(
        answers.every((r) => r.body.data.tokens.refreshToken === first.refreshToken),
        'each answers the same refresh token',
      );
      const accessTokens = answers.map((r) => r.body.data.tokens.accessToken as string);
      for (const token of [first.accessToken, accessTokens[0]!, accessTokens[9]!]) t.equal((await api(app, 'GET', '/api/v1/users/me', { token })).status, 200);
      const sessions = await api(app, 'GET', '/api/v1/users/me/sessions', { token: accessTokens[9]! });
      t.equal(sessions.body.data.length, 1, 'still the one session');
    },
  );

  await t.test(
    "theft protection of a kept refresh token: another user agent is refused and changes nothing; sign-out and an administrator's revoke end it",
    async (t) => {
      const session = await signIn(app, 'guarded@example.com', { userAgent: 'browser-A' });
      const stolen = await refresh(app, session.refreshToken, 'browser-B');
      t.equal(stolen.status, 401, 'the same token from another user agent');
      t.match(stolen.body.error, { code: 'UNAUTHORIZED', reason: 'INVALID_REFRESH_TOKEN' });
      t.equal((await refresh(app, session.refreshToken, 'browser-A')).status, 200, 'the owner goes on');
      t.equal((await api(app, 'POST', '/api/auth/sign-out', { body: { refreshToken: session.refreshToken } })).status, 200);
      t.equal((await refresh(app, session.refreshToken, 'browser-A')).status, 401, 'after sign-out');

      const revoked = await signIn(app, 'revoked@example.com', { userAgent: 'browser-A' });
      t.equal((await refresh(app, revoked.refreshToken, 'browser-A')).status, 200);
      const chief = await signIn(app, 'chief@example.com');
      const revoke = await api(app, 'POST', `/api/admin/users/${revoked.userId}/access/revoke`, { token: chief.accessToken });
      t.equal(revoke.status, 200);
      const after = await refresh(app, revoked.refreshToken, 'browser-A');
      t.equal(after.status, 401, "after an administrator's revoke");
      t.equal(after.body.error.reason, 'INVALID_REFRESH_TOKEN');
    },
  );

  await t.test('refresh is bound to the user agent; unknown tokens are 401; a missing one 400', async (t) => {
    const session = await signIn(app, 'agent@example.com', { userAgent: 'browser-A' });
    t.equal((await refresh(app, session.refreshToken, 'browser-B')).status, 401, 'another user agent');
    t.equal((await refresh(app, session.refreshToken, 'browser-A')).status, 200, 'its own user agent');
    t.equal((await refresh(app, 'garbage')).status, 401);
    t.equal((await refresh(app, `${session.userId}.${'A'.repeat(43)}`)).status, 401);
    t.equal((await api(app, 'POST', '/api/auth/refresh', { body: {} })).status, 400);
  });

  await t.test('an access token verifies with the algorithm it is issued with only (HS256): HS384, HS512 and none under the real secret are 401', async (t) => {
    const { accessToken } = await signIn(app, 'algorithms@example.com');
    const me = (token: string) => api(app, 'GET', '/api/v1/users/me', { token });
    const secret = app.deps.config.JWT_SECRET;
    t.equal(JSON.parse(Buffer.from(accessToken.split('.')[0]!, 'base64url').toString()).alg, 'HS256', 'issued as HS256');
    t.equal((await me(resigned(accessToken, 'HS256', secret))).status, 200, 'the same claims signed HS256 again: accepted');
    for (const alg of ['HS384', 'HS512', 'none'] as const) t.equal((await me(resigned(accessToken, alg, secret))).status, 401, alg);
  });

  await t.test('sign-out ends the session and is idempotent', async (t) => {
    const session = await signIn(app, 'leaver@example.com');
    const out = () => api(app, 'POST', '/api/auth/sign-out', { body: { refreshToken: session.refreshToken } });
    t.same((await out()).body, { success: true, data: { success: true } });
    t.same((await out()).body, { success: true, data: { success: true } }, 'again');
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: session.accessToken })).status, 401);
    t.equal((await refresh(app, session.refreshToken)).status, 401);
    const unknown = await api(app, 'POST', '/api/auth/sign-out', { body: { refreshToken: 'never-issued' } });
    t.same(unknown.body, { success: true, data: { success: true } });
    t.equal((await api(app, 'POST', '/api/auth/sign-out', { body: {} })).status, 400);
  });
});

t.test('an expired code is refused with 400', async (t) => {
  const app = await startTestApp({ config: { LOGIN_CODE_TTL_SECONDS: '1' } });
  t.teardown(() => app.close());
  t.equal((await lookup(app, 'slow@example.com')).status, 200);
  const code = codeOf(await app.waitForMail('slow@example.com'));
  await new Promise((r) => setTimeout(r, 1300));
  const res = await verify(app, 'slow@example.com', code);
  t.equal(res.status, 400);
  t.match(res.body.error.message, /expired/);
});

t.test('captcha (stand-in provider over HTTP)', async (t) => {
  const seen: URLSearchParams[] = [];
  const provider = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      seen.push(form);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: form.get('secret') === 'captcha-secret' && form.get('response') === 'human' }));
    });
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => provider.close(() => resolve())));
  const { port } = provider.address() as AddressInfo;
  const app = await startTestApp({
    config: { RECAPTCHA_SECRET: 'captcha-secret', RECAPTCHA_VERIFY_URL: `http://127.0.0.1:${port}/siteverify` },
  });
  t.teardown(() => app.close());

  const email = 'human@example.com';
  const robot = await lookup(app, email, { recaptcha: 'robot' });
  t.equal(robot.status, 403, 'lookup with a failing token');
  t.equal(robot.body.error.code, 'FORBIDDEN');
  t.equal((await api(app, 'POST', '/api/auth/lookup', { body: { email, fingerprint: 'fp' } })).status, 403, 'lookup without a token');
  t.equal(seen[0]?.get('secret'), 'captcha-secret');
  t.equal(seen[0]?.get('response'), 'robot');
  t.equal(seen[0]?.get('remoteip'), '127.0.0.1');

  t.equal((await lookup(app, email, { recaptcha: 'human' })).status, 200, 'lookup with a passing token');
  const code = codeOf(await app.waitForMail(email));
  const body = (recaptcha: string) => ({ email, code, recaptcha });
  t.equal((await api(app, 'POST', '/api/auth/verify', { body: body('robot') })).status, 403, 'verify with a failing token');
  t.equal((await api(app, 'POST', '/api/auth/verify', { body: body('human') })).status, 200, 'verify with a passing token');

  await t.test('the client IP sent to the provider ignores X-Forwarded-For unless TRUST_PROXY is set, and then only the trusted hops', async (t) => {
    const spoofed = { 'x-forwarded-for': '203.0.113.7' };
    seen.length = 0;
    await api(app, 'POST', '/api/auth/lookup', { headers: spoofed, body: lookupBody('spoof@example.com', { recaptcha: 'robot' }) });
    t.equal(seen[0]?.get('remoteip'), '127.0.0.1', 'by default a caller cannot choose its IP');

    const behindProxy = await buildApp({ ...app.deps, config: { ...app.deps.config, TRUST_PROXY: 1 } });
    t.teardown(() => behindProxy.close());
    const url = await behindProxy.listen({ port: 0, host: '127.0.0.1' });
    seen.length = 0;
    await api({ url }, 'POST', '/api/auth/lookup', { headers: spoofed, body: lookupBody('proxied@example.com', { recaptcha: 'robot' }) });
    t.equal(seen[0]?.get('remoteip'), '203.0.113.7', 'behind one trusted proxy the address it saw is used');
    seen.length = 0;
    // The client's own X-Forwarded-For comes first; the proxy appends the address it saw.
    await api({ url }, 'POST', '/api/auth/lookup', {
      headers: { 'x-forwarded-for': '198.51.100.9, 203.0.113.7' },
      body: lookupBody('chained@example.com', { recaptcha: 'robot' }),
    });
    t.equal(seen[0]?.get('remoteip'), '203.0.113.7', "an address the client wrote before the proxy's is not believed");
  });
});

t.test('a refresh token works until REFRESH_TOKEN_TTL_DAYS after sign-in, refreshed or not, then is 401, by the service clock', async (t) => {
  const clock = new SteppingClock();
  const app = await startTestApp({ clock, config: { REFRESH_TOKEN_TTL_DAYS: '2' } });
  t.teardown(() => app.close());
  const session = await signIn(app, 'expiring@example.com');
  clock.advance(86_400_000);
  t.equal((await refresh(app, session.refreshToken)).status, 200, 'a day in');
  clock.advance(86_400_000 - 60_000);
  const late = await refresh(app, session.refreshToken);
  t.equal(late.status, 200, 'a minute before its term ends it still works');
  t.equal(late.body.data.tokens.refreshToken, session.refreshToken);
  clock.advance(61_000);
  const expired = await refresh(app, session.refreshToken);
  t.equal(expired.status, 401, 'the refreshes did not extend the term');
  t.equal(expired.body.error.reason, 'INVALID_REFRESH_TOKEN');
});
