// Ways back in for a user who lost the authenticator, through the real app: recovery codes (shown
// once when MFA is turned on or replaced, each completing one sign-in) and an administrator's reset.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { createDispatcher } from '../../commands/dispatch.ts';
import { mfaKeys } from '../../commands/users/mfa-store.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { api, startTestApp } from '../support/app.ts';
import { signedApi } from '../support/api-keys.ts';
import { manyUsers, signIn, TEST_USER_AGENT, type SignedIn } from '../support/auth.ts';
import { SteppingClock, totpAt, verifyByEmail, wrongTotp } from '../support/mfa.ts';

const ua = { 'user-agent': TEST_USER_AGENT };
const clock = new SteppingClock();
const ADMIN = 'root@example.test';
const SHOWN = /^[a-z2-7]{5}-[a-z2-7]{5}$/;

t.test('MFA recovery codes and the administrator’s reset', async (t) => {
  // A key encryption key of its own, as production requires: the recovery codes' digest key derives from it.
  const app = await startTestApp({ clock, captureLogs: true, config: { ADMIN_EMAILS: ADMIN, KEY_ENCRYPTION_KEY: 'mfa-recovery-test-key-encryption-key' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  /** Every recovery code any answer showed: none may turn up anywhere else. */
  const revealed: string[] = [];
  const userIds: string[] = [];

  const now = () => clock.now();
  const post = (user: SignedIn, path: string, body?: unknown) =>
    api(app, 'POST', `/api/v1/users/me/mfa/${path}`, { token: user.accessToken, ...(body ? { body } : {}) });
  const me = async (user: SignedIn) => (await api(app, 'GET', '/api/v1/users/me', { token: user.accessToken })).body.data;
  const complete = (body: Record<string, string>) => api(app, 'POST', '/api/auth/mfa/verify', { headers: ua, body });
  const reset = (userId: string, token = admin.accessToken) => api(app, 'POST', `/api/admin/users/${userId}/mfa/reset`, { token });
  const user = async (name: string): Promise<SignedIn & { email: string }> => {
    const [signedIn] = await manyUsers(app, name, 1);
    userIds.push(signedIn!.userId);
    return { ...signedIn!, email: `${name}-0@example.test` };
  };
  /** Enrols and confirms: the secret and the recovery codes. The next TOTP code used must be of a later step. */
  const turnOn = async (u: SignedIn): Promise<{ secret: string; codes: string[] }> => {
    const { secret } = (await post(u, 'enrol')).body.data;
    const res = await post(u, 'confirm', { code: totpAt(secret, now()) });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    clock.nextStep();
    revealed.push(...res.body.data.recoveryCodes);
    return { secret, codes: res.body.data.recoveryCodes };
  };
  const challenge = async (email: string): Promise<string> => {
    const res = await verifyByEmail(app, email);
    if (res.body.data?.mfaRequired !== true) throw new Error(`no MFA challenge: ${JSON.stringify(res.body)}`);
    return res.body.data.tokens.mfaAccessToken;
  };
  const userEvents = async (userId: string) => app.deps.store.readStream(userDecider.streamOf(userId));

  await t.test('confirm answers ten codes once (no-store); the user document counts those left', async (t) => {
    const ada = await user('ada');
    t.equal((await me(ada)).mfaRecoveryCodesLeft, 0, 'none while MFA is off');
    const { secret } = (await post(ada, 'enrol')).body.data;
    const res = await post(ada, 'confirm', { code: totpAt(secret, now()) });
    clock.nextStep();
    t.equal(res.status, 200);
    t.equal(res.headers.get('cache-control'), 'no-store');
    const codes: string[] = res.body.data.recoveryCodes;
    revealed.push(...codes);
    t.equal(codes.length, 10);
    t.equal(new Set(codes).size, 10, 'distinct');
    for (const code of codes) t.match(code, SHOWN);
    t.match(await me(ada), { mfaEnabled: true, mfaRecoveryCodesLeft: 10 });
    const issued = (await userEvents(ada.userId)).filter((e) => e.type.startsWith('Mfa')).map((e) => e.type);
    t.same(issued, ['MfaEnabled', 'MfaRecoveryCodesIssued']);
  });

  await t.test('a recovery code completes a sign-in once, typed in any case, with or without the dash', async (t) => {
    const bea = await user('bea');
    const { codes } = await turnOn(bea);
    const first = await complete({ mfaAccessToken: await challenge(bea.email), recoveryCode: codes[0]!.toUpperCase().replace('-', '') });
    t.equal(first.status, 200, JSON.stringify(first.body));
    t.equal(first.body.data.mfaRequired, false);
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: first.body.data.tokens.accessToken })).body.data.email, bea.email, 'a normal session');
    const again = await complete({ mfaAccessToken: await challenge(bea.email), recoveryCode: codes[0]! });
    t.equal(again.status, 400, 'spent');
    t.equal(again.body.error.reason, 'INVALID_RECOVERY_CODE');
    t.equal((await complete({ mfaAccessToken: await challenge(bea.email), recoveryCode: ` ${codes[1]!} ` })).status, 200, 'the next code, as shown');
    t.equal((await me(bea)).mfaRecoveryCodesLeft, 8);
    const types = (await userEvents(bea.userId)).map((e) => e.type);
    t.same(types.slice(-2), ['MfaRecoveryCodeUsed', 'SessionStarted'], 'spent in the append that starts the session');
  });

  await t.test('mfa/verify takes exactly one of code and recoveryCode: 400 otherwise, the token kept', async (t) => {
    const cy = await user('cy');
    const { secret, codes } = await turnOn(cy);
    const token = await challenge(cy.email);
    const both = await complete({ mfaAccessToken: token, code: totpAt(secret, now()), recoveryCode: codes[0]! });
    t.equal(both.status, 400);
    t.match(both.body.error, { reason: 'VALIDATION_FAILED', message: /exactly one of code and recoveryCode/ });
    t.equal((await complete({ mfaAccessToken: token })).status, 400, 'neither');
    t.equal((await complete({ mfaAccessToken: token, recoveryCode: 'abcde-1bcde' })).status, 400, 'not a recovery code (1 is not Base32)');
    const unknown = await complete({ mfaAccessToken: 'mfa_unknown', recoveryCode: codes[0]! });
    t.equal(unknown.status, 401);
    t.equal(unknown.body.error.reason, 'INVALID_MFA_TOKEN');
    t.equal((await complete({ mfaAccessToken: token, recoveryCode: codes[0]! })).status, 200, 'the token still completes the sign-in');
    t.equal((await complete({ mfaAccessToken: token, recoveryCode: codes[1]! })).status, 401, 'once');
  });

  await t.test('two sign-ins racing with one recovery code: one session starts', async (t) => {
    const dot = await user('dot');
    const { codes } = await turnOn(dot);
    const [a, b] = [await challenge(dot.email), await challenge(dot.email)];
    const results = await Promise.all([complete({ mfaAccessToken: a, recoveryCode: codes[4]! }), complete({ mfaAccessToken: b, recoveryCode: codes[4]! })]);
    t.same(results.map((r) => r.status).sort(), [200, 400]);
    t.equal(results.find((r) => r.status === 400)?.body.error.reason, 'INVALID_RECOVERY_CODE');
    const events = await userEvents(dot.userId);
    t.equal(events.filter((e) => e.type === 'MfaRecoveryCodeUsed').length, 1);
    t.equal((await me(dot)).mfaRecoveryCodesLeft, 9);
  });

  await t.test('wrong recovery codes count against the attempt budget of TOTP codes: the fifth wrong one locks', async (t) => {
    const eli = await user('eli');
    const { secret, codes } = await turnOn(eli);
    const token = await challenge(eli.email);
    t.equal((await complete({ mfaAccessToken: token, code: wrongTotp(secret, now()) })).body.error.reason, 'INVALID_MFA_CODE');
    t.equal((await complete({ mfaAccessToken: token, code: wrongTotp(secret, now()) })).status, 400);
    for (let i = 3; i <= 4; i++) {
      const res = await complete({ mfaAccessToken: token, recoveryCode: 'aaaaa-aaaaa' });
      t.equal(res.status, 400, `wrong code ${i}`);
      t.equal(res.body.error.reason, 'INVALID_RECOVERY_CODE');
    }
    const locked = await complete({ mfaAccessToken: token, recoveryCode: 'bbbbb-bbbbb' });
    t.equal(locked.status, 429);
    t.equal(locked.body.error.reason, 'ACCOUNT_LOCKED');
    t.type(locked.body.error.nextRequestAt, 'string');
    t.equal((await complete({ mfaAccessToken: token, recoveryCode: codes[0]! })).status, 429, 'a right recovery code too');
    t.equal((await post(eli, 'recovery-codes', { code: totpAt(secret, now()) })).status, 429, 'and new codes');
    await app.deps.redis.del(mfaKeys(eli.userId).lock);
    t.equal((await complete({ mfaAccessToken: token, recoveryCode: codes[0]! })).status, 200, 'the code was not spent by the refusals');
  });

  await t.test('new codes for a current TOTP code (no-store): the old set stops working, the new one works', async (t) => {
    const fox = await user('fox');
    const { secret, codes: old } = await turnOn(fox);
    t.equal((await api(app, 'POST', '/api/v1/users/me/mfa/recovery-codes', { body: { code: '123456' } })).status, 401, 'no session');
    t.equal((await post(fox, 'recovery-codes', { code: 'abc' })).status, 400, 'not a code');
    const wrong = await post(fox, 'recovery-codes', { code: wrongTotp(secret, now()) });
    t.equal(wrong.status, 400);
    t.equal(wrong.body.error.reason, 'INVALID_MFA_CODE');
    const code = totpAt(secret, now());
    const res = await post(fox, 'recovery-codes', { code });
    t.equal(res.status, 200);
    t.equal(res.headers.get('cache-control'), 'no-store');
    const fresh: string[] = res.body.data.recoveryCodes;
    revealed.push(...fresh);
    t.equal(fresh.length, 10);
    t.same(
      fresh.filter((c) => old.includes(c)),
      [],
      'a new set',
    );
    const reused = await post(fox, 'recovery-codes', { code });
    t.equal(reused.status, 400, 'the same TOTP code again');
    t.equal(reused.body.error.reason, 'MFA_CODE_REUSED');
    t.equal((await complete({ mfaAccessToken: await challenge(fox.email), recoveryCode: old[0]! })).body.error?.reason, 'INVALID_RECOVERY_CODE', 'an old code');
    t.equal((await complete({ mfaAccessToken: await challenge(fox.email), recoveryCode: fresh[0]! })).status, 200, 'a new code');
    t.equal((await me(fox)).mfaRecoveryCodesLeft, 9);
    const off = await user('fox-off');
    const notOn = await post(off, 'recovery-codes', { code: '123456' });
    t.equal(notOn.status, 409);
    t.equal(notOn.body.error.reason, 'MFA_NOT_ENABLED');
    clock.nextStep();
  });

  await t.test('after a JWT_SECRET rotation, when the sealed TOTP secret no longer opens, a recovery code still signs in', async (t) => {
    const lea = await user('lea');
    const { secret, codes } = await turnOn(lea);
    const { store, redis, ids, swaps, config } = app.deps;
    const rotated = createDispatcher({
      store,
      redis,
      ids,
      swaps,
      mailer: { send: async () => {} },
      config: { ...config, JWT_SECRET: 'a-rotated-jwt-secret-of-forty-characters' },
    });
    const send = async (answer: { code: string } | { recoveryCode: string }) =>
      rotated({
        type: 'CompleteMfaSignIn',
        data: { mfaAccessToken: await challenge(lea.email), userAgent: TEST_USER_AGENT, ...answer },
        metadata: { now: now(), actor: 'anonymous', correlationId: 'rotation' },
      });
    const refused = await send({ code: totpAt(secret, now()) }).catch((err: unknown) => err);
    t.match(refused, { reason: 'MFA_SECRET_UNREADABLE' }, 'the TOTP code cannot be checked any more: a 409 saying what to do, not a 500');
    const { result } = await send({ recoveryCode: codes[0]! });
    t.equal(result.userId, lea.userId, 'the recovery code can');
  });

  await t.test('an API key cannot ask for recovery codes: a user session only', async (t) => {
    const gil = await user('gil');
    const { secret } = await turnOn(gil);
    const created = await api(app, 'POST', '/api/api-keys', { token: gil.accessToken, body: { name: 'k', scopes: ['profile:write'] } });
    t.equal(created.status, 201);
    const res = await signedApi(app, created.body.data, 'POST', '/api/v1/users/me/mfa/recovery-codes', { body: { code: totpAt(secret, now()) } });
    t.equal(res.status, 401);
    t.match(res.body.error, { reason: 'AUTHENTICATION_REQUIRED', message: /does not accept API keys/ });
    t.equal((await me(gil)).mfaRecoveryCodesLeft, 10, 'the set is unchanged');
  });

  await t.test('disabling MFA drops the codes; turned on again, only the new set works', async (t) => {
    const hal = await user('hal');
    const { secret, codes: old } = await turnOn(hal);
    t.equal((await post(hal, 'disable', { code: totpAt(secret, now()) })).status, 200);
    clock.nextStep();
    t.equal((await me(hal)).mfaRecoveryCodesLeft, 0);
    const { codes } = await turnOn(hal);
    t.equal((await complete({ mfaAccessToken: await challenge(hal.email), recoveryCode: old[0]! })).status, 400, 'a code of the dropped set');
    t.equal((await complete({ mfaAccessToken: await challenge(hal.email), recoveryCode: codes[0]! })).status, 200);
  });

  await t.test('an administrator resets MFA: the next sign-in needs only the emailed code; sessions stay', async (t) => {
    const ivo = await user('ivo');
    await turnOn(ivo);
    const pending = await challenge(ivo.email);
    const res = await reset(ivo.userId);
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.same(res.body.data, { userId: ivo.userId, mfaEnabled: false }, 'nothing else');
    const event = (await userEvents(ivo.userId)).at(-1)!;
    t.equal(event.type, 'MfaReset');
    t.same(event.data, { userId: ivo.userId, by: admin.userId, resetAt: String((event.data as { resetAt: string }).resetAt) });
    t.equal(event.metadata.actor, admin.userId, 'the administrator is the actor');
    t.match(await me(ivo), { mfaEnabled: false, mfaRecoveryCodesLeft: 0 }, 'the session from before still works');
    const stale = await complete({ mfaAccessToken: pending, code: '123456' });
    t.equal(stale.status, 401, 'a challenge issued before the reset is void');
    t.equal(stale.body.error.reason, 'INVALID_MFA_TOKEN');
    const signIn = await verifyByEmail(app, ivo.email);
    t.equal(signIn.body.data.mfaRequired, false);
    t.type(signIn.body.data.tokens.accessToken, 'string');
    const again = await reset(ivo.userId);
    t.equal(again.status, 409);
    t.equal(again.body.error.reason, 'MFA_NOT_ENABLED');
  });

  await t.test('the reset lifts the lock of wrong codes: the user can turn MFA on again at once', async (t) => {
    const kai = await user('kai');
    const { secret } = await turnOn(kai);
    const token = await challenge(kai.email);
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push((await complete({ mfaAccessToken: token, code: wrongTotp(secret, now()) })).status);
    t.same(answers, [400, 400, 400, 400, 429, 429], 'locked by wrong codes');
    t.equal((await reset(kai.userId)).status, 200);
    const fresh = await verifyByEmail(app, kai.email);
    const session = { ...kai, accessToken: fresh.body.data.tokens.accessToken as string };
    const { secret: again } = (await post(session, 'enrol')).body.data;
    const confirmed = await post(session, 'confirm', { code: totpAt(again, now()) });
    t.equal(confirmed.status, 200, 'no wait for the lock to run out');
    revealed.push(...confirmed.body.data.recoveryCodes);
  });

  await t.test('the reset: 401 anonymous, 403 ADMIN_REQUIRED for a user, 403 without admin:write, 404 unknown, 400 malformed', async (t) => {
    const jay = await user('jay');
    await turnOn(jay);
    t.equal((await api(app, 'POST', `/api/admin/users/${jay.userId}/mfa/reset`)).status, 401);
    const self = await reset(jay.userId, jay.accessToken);
    t.equal(self.status, 403);
    t.equal(self.body.error.reason, 'ADMIN_REQUIRED');
    const readKey = (await api(app, 'POST', '/api/api-keys', { token: admin.accessToken, body: { name: 'reader', scopes: ['admin:read'] } })).body.data;
    const byReader = await signedApi(app, readKey, 'POST', `/api/admin/users/${jay.userId}/mfa/reset`, { unsigned: true });
    t.equal(byReader.status, 403);
    t.equal(byReader.body.error.reason, 'INSUFFICIENT_SCOPE');
    const unknown = await reset(randomUUID());
    t.equal(unknown.status, 404);
    t.equal(unknown.body.error.reason, 'USER_NOT_FOUND');
    t.equal((await reset('not-a-user-id')).status, 400);
    t.equal((await me(jay)).mfaEnabled, true, 'none of these changed anything');
    const writeKey = (await api(app, 'POST', '/api/api-keys', { token: admin.accessToken, body: { name: 'ops', scopes: ['admin:write'] } })).body.data;
    t.equal(
      (await signedApi(app, writeKey, 'POST', `/api/admin/users/${jay.userId}/mfa/reset`, { unsigned: true })).status,
      200,
      'an administrator’s key, unsigned (the admin rule)',
    );
  });

  await t.test('the OpenAPI document: new codes by a user session only; the reset by administrators', async (t) => {
    const { paths } = (await api(app, 'GET', '/docs/json')).body;
    t.same(paths['/api/v1/users/me/mfa/recovery-codes'].post.security, [{ bearerAuth: [] }]);
    t.same(paths['/api/admin/users/{userId}/mfa/reset'].post.security, [{ bearerAuth: [] }, { apiKey: [], apiSignature: [], apiTimestamp: [] }]);
    t.ok(paths['/api/auth/mfa/verify'].post.requestBody.content['application/json'].schema.properties.recoveryCode);
  });

  await t.test('no recovery code is in a log line, an event, a read model, Redis or a later answer', async (t) => {
    const kim = await user('kim');
    await turnOn(kim);
    const forms = revealed.flatMap((c) => [c, c.toUpperCase(), c.replace('-', ''), c.replace('-', '').toUpperCase()]);
    t.ok(revealed.length >= 100, `${revealed.length} codes were shown`);
    const found = (text: string) => forms.filter((f) => text.includes(f));
    t.ok(app.logs.length > 0, 'the app logged');
    t.same(found(app.logs.join('\n')), [], 'no log line');
    const events = (await Promise.all(userIds.map(userEvents))).flat();
    t.ok(events.some((e) => e.type === 'MfaRecoveryCodesIssued'));
    t.same(found(JSON.stringify(events.map((e) => e.data))), [], 'no event (digests only)');
    t.same(found(JSON.stringify((await app.deps.pool.query('SELECT * FROM users')).rows)), [], 'no read-model row');
    // KEYS answers full names; the app's connection adds its prefix again to a name it is given.
    const keys = (await app.deps.redis.keys(`${app.runtime.keyPrefix}*`)).map((k) => k.slice(app.runtime.keyPrefix.length));
    const redis = app.deps.redis;
    const valueAt = async (k: string): Promise<unknown> => {
      const type = await redis.type(k);
      if (type === 'string') return redis.get(k);
      if (type === 'hash') return redis.hgetall(k);
      if (type === 'list') return redis.lrange(k, 0, -1);
      if (type === 'set') return redis.smembers(k);
      if (type === 'zset') return redis.zrange(k, 0, -1);
      if (type === 'stream') return redis.xrange(k, '-', '+');
      return type;
    };
    const values = await Promise.all(keys.map(valueAt));
    t.ok(values.filter((v) => typeof v === 'string' && v.length > 2).length > 0, `the values were read (${keys.length} keys)`);
    t.same(found(JSON.stringify([keys, values])), [], 'nothing in Redis');
    t.same(found(JSON.stringify(await me(kim))), [], 'not in the user document');
    const view = await api(app, 'GET', `/api/admin/operations/users/${kim.userId}`, { token: admin.accessToken });
    t.equal(view.body.data.result.mfaRecoveryCodesLeft, 10, 'the operations view counts them');
    t.same(found(JSON.stringify(view.body)), [], 'and shows none');
  });
});
