import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import t from 'tap';
import { userDecider } from '../../domain/user/decide.ts';
import { usernameDecider } from '../../domain/user/username.ts';
import { userIdForEmail } from '../../infra/tokens.ts';
import { api, dispatch, loadState, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { at } from '../support/given-when-then.ts';

const run = promisify(execFile);

t.test('user routes', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const me = (token?: string) => api(app, 'GET', '/api/v1/users/me', { token });
  const patch = (token: string, body: unknown) => api(app, 'PATCH', '/api/v1/users/me', { token, body });
  const usernameOwner = async (name: string) => (await loadState(app, usernameDecider, name)).state.owner;

  await t.test('the OpenAPI document describes the auth and user routes', async (t) => {
    const doc = await api(app, 'GET', '/docs/json');
    t.equal(doc.status, 200);
    for (const path of [
      '/api/auth/lookup',
      '/api/auth/verify',
      '/api/auth/refresh',
      '/api/auth/sign-out',
      '/api/auth/username-exists',
      '/api/v1/users/me',
      '/api/v1/users/me/sessions',
    ]) {
      t.ok(doc.body.paths[path], path);
    }
  });

  await t.test('GET /users/me is 401 without a valid bearer token', async (t) => {
    const none = await me();
    t.equal(none.status, 401);
    t.same(none.body.error.code, 'UNAUTHORIZED');
    t.equal((await me('not.a.jwt')).status, 401);
    t.equal((await api(app, 'GET', '/api/v1/users/me', { headers: { authorization: 'Basic abc' } })).status, 401);
  });

  await t.test('GET /users/me answers the user document', async (t) => {
    const ann = await signIn(app, 'ann@example.com', { username: 'ann' });
    const res = await me(ann.accessToken);
    t.equal(res.status, 200);
    t.match(res.body.data, {
      id: ann.userId,
      email: 'ann@example.com',
      username: 'ann',
      role: 'user',
      tier: 'free',
      virtualWalletMode: true,
      languageCode: 'en',
      createdAt: /^\d{4}-\d\d-\d\dT/,
    });
  });

  await t.test('PATCH /users/me changes the given fields and keeps the others', async (t) => {
    const bea = await signIn(app, 'bea@example.com', { username: 'bea' });
    const res = await patch(bea.accessToken, { languageCode: 'pt-BR', virtualWalletMode: false, avatarFilename: 'bea.png' });
    t.equal(res.status, 200);
    t.match(res.body.data, { username: 'bea', languageCode: 'pt-BR', virtualWalletMode: false, avatarFilename: 'bea.png' });
    const after = await patch(bea.accessToken, { username: 'Beatrice' });
    t.match(after.body.data, { username: 'Beatrice', languageCode: 'pt-BR', virtualWalletMode: false });
    t.same((await me(bea.accessToken)).body.data, after.body.data, 'a later read sees the same document');
  });

  await t.test('PATCH /users/me is 400 for invalid fields and 401 without a token', async (t) => {
    const cy = await signIn(app, 'cy@example.com');
    for (const body of [{ languageCode: 'english!' }, { username: 'a b' }, { virtualWalletMode: 'yes' }, { avatarFilename: '../x' }, { email: 'x@y.z' }]) {
      const res = await patch(cy.accessToken, body);
      t.equal(res.status, 400, JSON.stringify(body));
      t.equal(res.body.error.code, 'BAD_REQUEST');
    }
    t.equal((await api(app, 'PATCH', '/api/v1/users/me', { body: { languageCode: 'de' } })).status, 401);
  });

  await t.test('a username is unique ignoring case; a released one can be taken', async (t) => {
    const dan = await signIn(app, 'dan@example.com', { username: 'dan' });
    const eve = await signIn(app, 'eve@example.com', { username: 'eve' });
    const taken = await patch(eve.accessToken, { username: 'DAN' });
    t.equal(taken.status, 400);
    t.match(taken.body.error.message, /taken/);
    t.equal((await patch(dan.accessToken, { username: 'daniel' })).status, 200);
    t.same((await api(app, 'GET', '/api/auth/username-exists?username=dan')).body.data, { exists: false });
    t.match((await patch(eve.accessToken, { username: 'Dan' })).body.data, { username: 'Dan' });
  });

  await t.test('two users claiming one username at once: exactly one gets it', async (t) => {
    const [fay, gus] = await Promise.all([signIn(app, 'fay@example.com'), signIn(app, 'gus@example.com')]);
    const results = await Promise.all([patch(fay.accessToken, { username: 'winner' }), patch(gus.accessToken, { username: 'winner' })]);
    t.same(results.map((r) => r.status).sort(), [200, 400]);
  });

  await t.test('concurrent renames leave exactly the final name reserved; the others are free', async (t) => {
    const kim = await signIn(app, 'kim@example.com', { username: 'kim_start' });
    const names = ['kim_a', 'kim_b', 'kim_c', 'kim_d', 'kim_e'];
    const results = await Promise.all(names.map((username) => patch(kim.accessToken, { username })));
    t.same(
      results.map((r) => r.status),
      names.map(() => 200),
      'every rename applies, one after another',
    );
    const final = (await me(kim.accessToken)).body.data.username as string;
    t.ok(names.includes(final), `the final name is one of the asked (${final})`);

    const exists = async (username: string) => (await api(app, 'GET', `/api/auth/username-exists?username=${username}`)).body.data.exists;
    for (const name of ['kim_start', ...names]) {
      const holder = name === final ? kim.userId : null;
      t.equal(await usernameOwner(name), holder, `${name} reserved by ${holder ?? 'nobody'}`);
      t.equal(await exists(name), name === final, `username-exists ${name}`);
    }
    const lee = await signIn(app, 'lee@example.com');
    for (const name of ['kim_start', ...names.filter((n) => n !== final)]) {
      t.equal((await patch(lee.accessToken, { username: name })).status, 200, `another user can take ${name}`);
    }
    t.equal((await patch(lee.accessToken, { username: final })).status, 400, 'the final name stays taken');
  });

  await t.test('a rename that only changes case keeps the reservation', async (t) => {
    const mo = await signIn(app, 'mo@example.com', { username: 'mo_name' });
    t.match((await patch(mo.accessToken, { username: 'MO_Name' })).body.data, { username: 'MO_Name' });
    t.equal(await usernameOwner('mo_name'), mo.userId);
  });

  await t.test('one email registered concurrently yields one user', async (t) => {
    const email = 'twin@example.com';
    const userId = userIdForEmail(email);
    const attempts = ['twin_a', 'twin_b', 'twin_c', 'twin_d'].map((username) =>
      app.deps.dispatch.room.handle(
        userDecider.streamOf(userId),
        userDecider,
        (state) =>
          userDecider.decide({ type: 'RegisterUser', data: { userId, email, username, isAdminEmail: false, signup: {} }, metadata: at(new Date()) }, state),
        { metadata: at(new Date()), ids: app.deps.ids, deadline: Date.now() + 5000 },
      ),
    );
    const results = await Promise.all(attempts);
    t.equal(results.filter((r) => r.events.length === 1).length, 1, 'exactly one registration appended');
    const stream = await app.deps.store.readStream(`user-${userId}`);
    t.same(
      stream.map((e) => e.type),
      ['UserRegistered'],
    );
  });

  await t.test('GET /users/me/sessions lists active sessions without secrets', async (t) => {
    const a = await signIn(app, 'hal@example.com', { userAgent: 'phone/1' });
    const b = await signIn(app, 'hal@example.com', { userAgent: 'laptop/2' });
    const res = await api(app, 'GET', '/api/v1/users/me/sessions', { token: b.accessToken });
    t.equal(res.status, 200);
    t.equal(res.body.data.length, 2);
    t.same(res.body.data.map((s: { userAgent: string; current: boolean }) => [s.userAgent, s.current]).sort(), [
      ['laptop/2', true],
      ['phone/1', false],
    ]);
    for (const s of res.body.data) t.same(Object.keys(s).sort(), ['createdAt', 'current', 'expiresAt', 'id', 'lastUsedAt', 'userAgent']);
    t.notOk(JSON.stringify(res.body).includes(a.refreshToken.split('.')[1]!), 'no token in the answer');
    await api(app, 'POST', '/api/auth/sign-out', { body: { refreshToken: a.refreshToken } });
    const after = await api(app, 'GET', '/api/v1/users/me/sessions', { token: b.accessToken });
    t.same(
      after.body.data.map((s: { userAgent: string }) => s.userAgent),
      ['laptop/2'],
      'a signed-out session leaves the list',
    );
    t.equal((await api(app, 'GET', '/api/v1/users/me/sessions')).status, 401);
  });

  await t.test('GrantRole developer makes a user a developer, idempotently, and never downgrades an admin', async (t) => {
    const ivy = await signIn(app, 'ivy@example.com');
    const becomeDeveloper = (userId: string) => dispatch(app, 'GrantRole', { user: { userId }, role: 'developer', reason: 'agent_listed' });
    t.same((await becomeDeveloper(ivy.userId)).result, { granted: true });
    t.equal((await me(ivy.accessToken)).body.data.role, 'developer');
    t.same((await becomeDeveloper(ivy.userId)).result, { granted: false }, 'again: nothing');
    await t.rejects(becomeDeveloper(randomUUID()), { name: 'DomainError', reason: 'USER_NOT_FOUND' });
  });

  await t.test('admin:grant (scripts/admin-grant.ts) makes a registered user an administrator', async (t) => {
    const jo = await signIn(app, 'jo@example.com');
    const env = { ...process.env, DATABASE_URL: app.databaseUrl, NODE_ENV: 'test', LOG_LEVEL: 'silent' };
    // Two runs of the script, side by side: the unknown email changes nothing.
    const [granted, unknown] = await Promise.all([
      run(process.execPath, ['--import', 'tsx', 'scripts/admin-grant.ts', 'JO@example.com'], { env }),
      run(process.execPath, ['--import', 'tsx', 'scripts/admin-grant.ts', 'nobody@example.com'], { env }).catch((err) => err),
    ]);
    t.match(granted.stdout, /jo@example\.com is now an administrator/);
    let role = '';
    for (let i = 0; i < 50 && role !== 'admin'; i++) {
      role = (await me(jo.accessToken)).body.data.role;
      if (role !== 'admin') await new Promise((r) => setTimeout(r, 100));
    }
    t.equal(role, 'admin', 'the projection picks up the grant made by another process');
    const dev = await dispatch(app, 'GrantRole', { user: { userId: jo.userId }, role: 'developer', reason: 'agent_listed' });
    t.same(dev.result, { granted: false }, 'listing an agent keeps the administrator an administrator');

    t.not(unknown.code, 0, 'an unknown email exits non-zero');
    t.match(unknown.stderr, /no user is registered with the email nobody@example\.com/);
  });
});
