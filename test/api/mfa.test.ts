import t from 'tap';
import { userDecider } from '../../domain/user/decide.ts';
import { mfaKeys } from '../../commands/users/mfa-store.ts';
import { sha256Hex } from '../../infra/tokens.ts';
import { api, loadState, startTestApp } from '../support/app.ts';
import { manyUsers, TEST_USER_AGENT, type SignedIn } from '../support/auth.ts';
import { SteppingClock, totpAt, verifyByEmail, wrongTotp } from '../support/mfa.ts';

const ua = { 'user-agent': TEST_USER_AGENT };
const clock = new SteppingClock();

t.test('MFA with TOTP', async (t) => {
  const app = await startTestApp({ clock, captureLogs: true });
  t.teardown(() => app.close());

  const enrol = (user: SignedIn) => api(app, 'POST', '/api/v1/users/me/mfa/enrol', { token: user.accessToken });
  const confirm = (user: SignedIn, code: string) => api(app, 'POST', '/api/v1/users/me/mfa/confirm', { token: user.accessToken, body: { code } });
  const disable = (user: SignedIn, code: string) => api(app, 'POST', '/api/v1/users/me/mfa/disable', { token: user.accessToken, body: { code } });
  const complete = (mfaAccessToken: string, code: string) => api(app, 'POST', '/api/auth/mfa/verify', { headers: ua, body: { mfaAccessToken, code } });
  const now = () => clock.now();
  /** A registered user with a session (set up through the dispatcher: the emailed-code route is tested elsewhere). */
  const user = async (name: string): Promise<SignedIn & { email: string }> => ({ ...(await manyUsers(app, name, 1))[0]!, email: `${name}-0@example.test` });
  /** Enrols and confirms: the secret. The next code used must be of a later step. */
  const turnOn = async (user: SignedIn): Promise<string> => {
    const { secret } = (await enrol(user)).body.data;
    t.equal((await confirm(user, totpAt(secret, now()))).status, 200, 'confirmed');
    clock.nextStep();
    return secret;
  };
  /** An emailed-code sign-in of a user with MFA on: the mfaAccessToken. */
  const challenge = async (email: string): Promise<string> => {
    const res = await verifyByEmail(app, email);
    if (res.status !== 200 || res.body.data.mfaRequired !== true) throw new Error(`no MFA challenge: ${JSON.stringify(res.body)}`);
    return res.body.data.tokens.mfaAccessToken;
  };

  await t.test('enrolling needs a sign-in of the last 15 minutes: an older session (or a stolen token of one) is 401', async (t) => {
    const old = await user('olga');
    clock.advance(15 * 60_000 + 1_000);
    const res = await enrol(old);
    t.equal(res.status, 401);
    t.equal(res.body.error.reason, 'RECENT_SIGN_IN_REQUIRED');
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: old.accessToken })).body.data.mfaEnabled, false);
    const fresh = await user('fresh');
    clock.advance(15 * 60_000 - 1_000);
    t.equal((await enrol(fresh)).status, 200, 'just under 15 minutes after the sign-in');
  });

  await t.test('enrol answers a secret and its otpauth URI once; MFA is off until a first code confirms it', async (t) => {
    const ann = await user('ann');
    t.equal((await api(app, 'POST', '/api/v1/users/me/mfa/enrol')).status, 401, 'no session');
    const res = await enrol(ann);
    t.equal(res.status, 200);
    t.equal(res.headers.get('cache-control'), 'no-store');
    const { secret, otpauthUri, expiresAt } = res.body.data;
    t.match(secret, /^[A-Z2-7]{32}$/, '20 random bytes in Base32');
    const uri = new URL(otpauthUri);
    t.equal(`${uri.protocol}//${uri.host}`, 'otpauth://totp');
    t.equal(uri.searchParams.get('secret'), secret);
    t.equal(uri.searchParams.get('issuer'), 'Agent Trading');
    t.match(decodeURIComponent(uri.pathname), /ann-0@example\.test$/);
    t.ok(new Date(expiresAt) > now(), 'the enrolment waits for its code a while');

    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: ann.accessToken })).body.data.mfaEnabled, false, 'not on yet');
    const before = await verifyByEmail(app, ann.email);
    t.equal(before.body.data.mfaRequired, false, 'sign-ins need no code before the confirmation');

    const wrong = await confirm(ann, wrongTotp(secret, now()));
    t.equal(wrong.status, 400);
    t.equal(wrong.body.error.reason, 'INVALID_MFA_CODE');
    t.equal((await confirm(ann, '12a')).status, 400, 'not a 6-digit code');
    const ok = await confirm(ann, totpAt(secret, now()));
    t.equal(ok.status, 200);
    t.match(ok.body.data, { mfaEnabled: true, recoveryCodes: Array }, 'with the recovery codes (test/api/mfa-recovery.test.ts)');
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: ann.accessToken })).body.data.mfaEnabled, true, 'the user document shows it');
    const again = await confirm(ann, totpAt(secret, now()));
    t.equal(again.status, 409);
    t.equal(again.body.error.reason, 'MFA_ALREADY_ENABLED');
    t.equal((await enrol(ann)).status, 409, 'no second enrolment while on');
    clock.nextStep();

    const { state } = await loadState(app, userDecider, ann.userId);
    t.ok(state.status === 'registered' && state.mfa && !state.mfa.sealedSecret.includes(secret), 'the stream holds the secret sealed');
  });

  await t.test('confirm without a pending enrolment is 409', async (t) => {
    const bob = await user('bob');
    const res = await confirm(bob, '123456');
    t.equal(res.status, 409);
    t.equal(res.body.error.reason, 'MFA_ENROLMENT_NOT_FOUND');
    t.equal((await api(app, 'POST', '/api/v1/users/me/mfa/confirm', { body: { code: '123456' } })).status, 401, 'no session');
  });

  await t.test('with MFA on, verify answers mfaRequired and only an mfaAccessToken; a code completes the sign-in', async (t) => {
    const cat = await user('cat');
    const secret = await turnOn(cat);
    const res = await verifyByEmail(app, cat.email);
    t.equal(res.status, 200);
    t.equal(res.body.data.mfaRequired, true);
    t.same(Object.keys(res.body.data.tokens), ['mfaAccessToken'], 'no access or refresh token');
    const mfaAccessToken: string = res.body.data.tokens.mfaAccessToken;
    const ttl = await app.deps.redis.pttl(`auth:mfa-token:${sha256Hex(mfaAccessToken)}`);
    t.ok(ttl > 0 && ttl <= 300_000, `short-lived: ${ttl} ms left`);

    t.equal((await complete('mfa_unknown', totpAt(secret, now()))).status, 401, 'an unknown token');
    t.equal((await api(app, 'POST', '/api/auth/mfa/verify', { body: { mfaAccessToken } })).status, 400, 'no code');
    const done = await complete(mfaAccessToken, totpAt(secret, now()));
    t.equal(done.status, 200);
    t.equal(done.body.data.mfaRequired, false);
    const { accessToken, refreshToken } = done.body.data.tokens;
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: accessToken })).body.data.email, cat.email);
    t.equal((await api(app, 'POST', '/api/auth/refresh', { headers: ua, body: { refreshToken } })).status, 200, 'a normal session');
    clock.nextStep();
    const spent = await complete(mfaAccessToken, totpAt(secret, now()));
    t.equal(spent.status, 401, 'the token works once');
    t.equal(spent.body.error.reason, 'INVALID_MFA_TOKEN');
  });

  await t.test('the mfaAccessToken grants nothing else: every other route answers 401', async (t) => {
    const dan = await user('dan');
    await turnOn(dan);
    const mfaAccessToken = await challenge(dan.email);
    for (const [method, path] of [
      ['GET', '/api/v1/users/me'],
      ['GET', '/api/v1/users/me/sessions'],
      ['GET', '/api/v1/users/me/social-status'],
      ['POST', '/api/v1/users/me/mfa/enrol'],
      ['GET', '/api/v1/users/me/subscriptions'],
      ['GET', '/api/v1/wallet'],
    ] as const) {
      const res = await api(app, method, path, { token: mfaAccessToken });
      t.equal(res.status, 401, `${method} ${path}`);
    }
    const disabled = await api(app, 'POST', '/api/v1/users/me/mfa/disable', { token: mfaAccessToken, body: { code: '123456' } });
    t.equal(disabled.status, 401, 'nor can it turn MFA off');
    t.equal((await api(app, 'POST', '/api/auth/refresh', { headers: ua, body: { refreshToken: mfaAccessToken } })).status, 401, 'it is no refresh token');
  });

  await t.test('a code already used (same time step) is refused; the token waits for the next code', async (t) => {
    const eve = await user('eve');
    const secret = await turnOn(eve);
    const code = totpAt(secret, now());
    t.equal((await complete(await challenge(eve.email), code)).status, 200, 'first use');
    const second = await challenge(eve.email);
    const replay = await complete(second, code);
    t.equal(replay.status, 400);
    t.equal(replay.body.error.reason, 'MFA_CODE_REUSED');
    clock.nextStep();
    t.equal((await complete(second, totpAt(secret, now()))).status, 200, 'the next step’s code completes it');
  });

  await t.test('two sign-ins racing with one code: one session starts', async (t) => {
    const fay = await user('fay');
    const secret = await turnOn(fay);
    const [a, b] = [await challenge(fay.email), await challenge(fay.email)];
    const code = totpAt(secret, now());
    const results = await Promise.all([complete(a, code), complete(b, code)]);
    t.same(results.map((r) => r.status).sort(), [200, 400]);
    t.equal(results.find((r) => r.status === 400)?.body.error.reason, 'MFA_CODE_REUSED');
    clock.nextStep();
  });

  await t.test('5 wrong codes lock MFA for 15 minutes: 429, even for the right code', async (t) => {
    const gus = await user('gus');
    const secret = await turnOn(gus);
    const token = await challenge(gus.email);
    const wrong = wrongTotp(secret, now());
    for (let i = 1; i <= 4; i++) {
      const res = await complete(token, wrong);
      t.equal(res.status, 400, `wrong code ${i}`);
      t.equal(res.body.error.reason, 'INVALID_MFA_CODE');
    }
    const locked = await complete(token, wrong);
    t.equal(locked.status, 429);
    t.equal(locked.body.error.code, 'TOO_MANY_REQUESTS');
    const wait = (new Date(locked.body.error.nextRequestAt).getTime() - now().getTime()) / 1000;
    t.ok(wait > 14 * 60 && wait <= 15 * 60, `locked for ${wait} s`);
    t.equal((await complete(token, totpAt(secret, now()))).status, 429, 'the right code too');
    t.equal((await disable(gus, totpAt(secret, now()))).status, 429, 'and turning MFA off');
    t.equal((await complete(await challenge(gus.email), totpAt(secret, now()))).status, 429, 'a new token does not reset it');
  });

  await t.test('wrong codes racing are counted one by one: at most 5 are checked', async (t) => {
    const hal = await user('hal');
    const secret = await turnOn(hal);
    const token = await challenge(hal.email);
    const results = await Promise.all(Array.from({ length: 8 }, () => complete(token, wrongTotp(secret, now()))));
    t.same(results.map((r) => r.status).sort(), [400, 400, 400, 400, 429, 429, 429, 429]);
    t.ok((await app.deps.redis.pttl(mfaKeys(hal.userId).lock)) > 0, 'locked');
  });

  await t.test('disable needs a current code that was not used yet', async (t) => {
    const ivy = await user('ivy');
    t.equal((await disable(ivy, '123456')).status, 409, 'MFA not on');
    const secret = await turnOn(ivy);
    t.equal((await api(app, 'POST', '/api/v1/users/me/mfa/disable', { body: { code: '123456' } })).status, 401, 'no session');
    t.equal((await disable(ivy, '12345')).status, 400, 'not a code');
    const wrong = await disable(ivy, wrongTotp(secret, now()));
    t.equal(wrong.status, 400);
    t.equal(wrong.body.error.reason, 'INVALID_MFA_CODE');
    const code = totpAt(secret, now());
    const session = await complete(await challenge(ivy.email), code);
    t.equal(session.status, 200);
    const replay = await disable(ivy, code);
    t.equal(replay.status, 400, 'the code of the sign-in cannot turn MFA off');
    t.equal(replay.body.error.reason, 'MFA_CODE_REUSED');
    clock.nextStep();
    const off = await disable(ivy, totpAt(secret, now()));
    t.equal(off.status, 200);
    t.same(off.body.data, { mfaEnabled: false });
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: ivy.accessToken })).body.data.mfaEnabled, false);
    const plain = await verifyByEmail(app, ivy.email);
    t.equal(plain.body.data.mfaRequired, false, 'sign-ins need no code again');
    t.type(plain.body.data.tokens.accessToken, 'string');
    const types = (await app.deps.store.readStream(userDecider.streamOf(ivy.userId))).map((e) => e.type);
    t.same(
      types.filter((e) => e.startsWith('Mfa')),
      ['MfaEnabled', 'MfaRecoveryCodesIssued', 'MfaDisabled'],
    );
  });

  await t.test('the OpenAPI document: MFA changes take a user session only; the completion is public', async (t) => {
    const { paths } = (await api(app, 'GET', '/docs/json')).body;
    for (const action of ['enrol', 'confirm', 'disable', 'recovery-codes']) {
      t.same(paths[`/api/v1/users/me/mfa/${action}`].post.security, [{ bearerAuth: [] }], action);
    }
    t.same(paths['/api/auth/mfa/verify'].post.security, [], 'mfa/verify takes no credentials: the mfaAccessToken is in its body');
    t.ok(paths['/api/auth/mfa/verify'].post.requestBody);
  });

  await t.test('no secret or token reaches a log line, and the secret is never shown again', async (t) => {
    const jo = await user('jo');
    const secret = await turnOn(jo);
    const token = await challenge(jo.email);
    await complete(token, totpAt(secret, now()));
    clock.nextStep();
    const me = await api(app, 'GET', '/api/v1/users/me', { token: jo.accessToken });
    t.notOk(JSON.stringify(me.body).includes(secret), 'not in the user document');
    const events = await app.deps.store.readStream(userDecider.streamOf(jo.userId));
    t.notOk(JSON.stringify(events.map((e) => e.data)).includes(secret), 'not in the events (sealed)');
    t.notOk(JSON.stringify(await app.deps.redis.keys(`${app.runtime.keyPrefix}*`)).includes(token), 'Redis keys hold only digests of tokens');
    t.ok(app.logs.length > 0, 'the app logged');
    t.notOk(
      app.logs.some((l) => l.includes(secret) || l.includes(token)),
      'no log line',
    );
  });
});
