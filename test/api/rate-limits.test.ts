// Per-tier rate limits: one budget per API key, per OAuth user and per session user,
// counted in Redis and shared by API processes; the headers on every authenticated answer; 429 with
// Retry-After in the envelope; an administrator's tier change; fail-open when Redis is away.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { buildApp } from '../../api/app.ts';
import { createDispatcher } from '../../commands/dispatch.ts';
import { createRedis } from '../../infra/redis.ts';
import { api, apiWithConfig, startTestApp } from '../support/app.ts';
import { signedApi } from '../support/api-keys.ts';
import { manyUsers, signIn } from '../support/auth.ts';
import { startServiceProcess } from '../support/process.ts';

const ADMIN = 'admin@example.test';
const LIMITS = { RATE_LIMIT_FREE_PER_MIN: '4', RATE_LIMIT_STANDARD_PER_MIN: '8', RATE_LIMIT_PREMIUM_PER_MIN: '1000' };

t.test('rate limits by tier', async (t) => {
  // A Redis key space a child process can name too (REDIS_PREFIX), so both share the budgets.
  const prefix = `rl-${randomBytes(6).toString('hex')}`;
  const app = await startTestApp({ redisKeyPrefix: '', config: { ADMIN_EMAILS: ADMIN, REDIS_PREFIX: prefix, ...LIMITS } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  await api(app, 'PUT', `/api/admin/users/${admin.userId}/tier`, { token: admin.accessToken, body: { tier: 'premium' } });

  await t.test('a session user: headers on every answer, 429 with Retry-After past the tier, public routes untouched', async (t) => {
    const u = await signIn(app, 'free@example.test');
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await api(app, 'GET', '/api/v1/users/me', { token: u.accessToken }));
    t.same(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 429],
    );
    t.same(
      answers.map((a) => a.headers.get('x-ratelimit-remaining')),
      ['3', '2', '1', '0', '0'],
    );
    t.ok(answers.every((a) => a.headers.get('x-ratelimit-limit') === '4'));
    const reset = Number(answers[0]!.headers.get('x-ratelimit-reset'));
    t.ok(reset > 0 && reset <= 60, `reset in seconds (${reset})`);
    const refused = answers[4]!;
    t.match(refused.body, { success: false, error: { code: 'TOO_MANY_REQUESTS', reason: 'RATE_LIMITED' } });
    t.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
    t.equal((await api(app, 'GET', '/api/v1/wallet', { token: u.accessToken })).status, 429, 'one budget across routes');
    for (const [method, path, body] of [
      ['POST', '/api/api-keys', { name: 'late' }],
      ['GET', '/api/api-keys', undefined],
      ['DELETE', '/api/api-keys/some-key', undefined],
    ] as const) {
      const res = await api(app, method, path, { token: u.accessToken, ...(body ? { body } : {}) });
      t.equal(res.status, 429, `${method} ${path} too`);
      t.equal(res.body.error.reason, 'RATE_LIMITED');
    }
    const anonymous = await api(app, 'GET', '/api/v1/agents');
    t.equal(anonymous.status, 200);
    t.equal(anonymous.headers.get('x-ratelimit-limit'), null, 'no budget without a caller');
  });

  await t.test('an API key has a budget of its own; another process shares it', async (t) => {
    const u = await signIn(app, 'keys@example.test');
    const created = await api(app, 'POST', '/api/api-keys', { token: u.accessToken, body: { name: 'bot' } });
    const key = { apiKey: created.body.data.apiKey, secretKey: created.body.data.secretKey };
    const other = await startServiceProcess(app, 'api', { ...LIMITS, REDIS_PREFIX: prefix });
    t.teardown(() => other.stop());
    const forged = [];
    for (let i = 0; i < 5; i++) forged.push((await signedApi(app, key, 'GET', '/api/v1/users/me', { unsigned: true })).status);
    t.same(forged, [401, 401, 401, 401, 401], 'the key without its secret is refused and spends nothing of its budget');
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await signedApi(i % 2 ? other : app, key, 'GET', '/api/v1/users/me')).status);
    t.same(statuses, [200, 200, 200, 200, 429], 'four requests a minute across both processes');
    t.equal(
      (await api(app, 'GET', '/api/v1/users/me', { token: u.accessToken })).status,
      200,
      "the session's budget is not the key's (one request after the creation)",
    );
  });

  await t.test('an administrator raises a tier (event with the administrator as actor); a user cannot', async (t) => {
    const u = await signIn(app, 'upgraded@example.test');
    t.equal((await api(app, 'PUT', `/api/admin/users/${u.userId}/tier`, { token: u.accessToken, body: { tier: 'premium' } })).status, 403);
    const res = await api(app, 'PUT', `/api/admin/users/${u.userId}/tier`, { token: admin.accessToken, body: { tier: 'standard' } });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.same(res.body.data, { userId: u.userId, tier: 'standard' });
    t.equal((await api(app, 'PUT', `/api/admin/users/${u.userId}/tier`, { token: admin.accessToken, body: { tier: 'gold' } })).status, 400);
    t.equal(
      (await api(app, 'PUT', `/api/admin/users/00000000-0000-4000-8000-000000000000/tier`, { token: admin.accessToken, body: { tier: 'free' } })).status,
      404,
    );
    const me = await api(app, 'GET', '/api/v1/users/me', { token: u.accessToken });
    t.equal(me.headers.get('x-ratelimit-limit'), '8');
    t.equal(me.body.data.tier, 'standard');
    const events = await app.deps.store.readStream(`user-${u.userId}`);
    t.match(
      events.filter((e) => e.type === 'TierChanged'),
      [{ data: { tier: 'standard', previousTier: 'free' }, metadata: { actor: admin.userId } }],
    );
  });

  await t.test('Redis away: what Redis guards answers 503 at once (fail-closed): signed API-key requests, the sign-in; session reads go on', async (t) => {
    const u = await signIn(app, 'closed@example.test');
    const created = await api(app, 'POST', '/api/api-keys', { token: u.accessToken, body: { name: 'bot' } });
    const key = { apiKey: created.body.data.apiKey, secretKey: created.body.data.secretKey };
    // A second API on the same deps whose own Redis connection (and the limiter's) reach no server.
    const deadRedis = createRedis('redis://127.0.0.1:1', app.runtime.keyPrefix);
    deadRedis.on('error', () => {});
    const { store, ids, swaps, config } = app.deps;
    const server = await buildApp({
      ...app.deps,
      redis: deadRedis,
      dispatch: createDispatcher({ store, redis: deadRedis, mailer: { send: async () => {} }, ids, swaps, config }),
      config: { ...config, RATE_LIMIT_REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_REDIS_TIMEOUT_MS: 50 },
    });
    const away = { url: await server.listen({ port: 0, host: '127.0.0.1' }) };
    t.teardown(async () => {
      await server.close();
      deadRedis.disconnect();
    });
    const started = performance.now();
    const signed = await signedApi(away, key, 'GET', '/api/v1/users/me');
    t.equal(signed.status, 503, 'a signature cannot be proven fresh without Redis: refused, not accepted unproven');
    t.match(signed.body, { success: false, error: { reason: 'SERVICE_UNAVAILABLE' } });
    const lookup = await api(away, 'POST', '/api/auth/lookup', {
      headers: { 'user-agent': 'test' },
      body: { email: 'someone@example.test', recaptcha: 'tok', fingerprint: 'fp' },
    });
    t.equal(lookup.status, 503, 'the login throttles cannot count: no code is sent');
    t.equal(lookup.body.error.reason, 'SERVICE_UNAVAILABLE');
    t.equal((await api(away, 'GET', '/api/v1/users/me', { token: u.accessToken })).status, 200, 'a session read needs no Redis (the limiter fails open)');
    t.ok(performance.now() - started < 5_000, `nothing waits for Redis (${Math.round(performance.now() - started)} ms)`);
    t.equal((await signedApi(app, key, 'GET', '/api/v1/users/me')).status, 200, 'with Redis back the key works');
  });

  await t.test('Redis away: the limiter lets requests through at once (fail-open)', async (t) => {
    const away = await apiWithConfig(app, { RATE_LIMIT_REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_REDIS_TIMEOUT_MS: 50 });
    t.teardown(() => away.close());
    const u = await signIn(app, 'open@example.test');
    const started = performance.now();
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await api(away, 'GET', '/api/v1/users/me', { token: u.accessToken }));
    t.same(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 200, 200],
      'nothing is limited while the limiter cannot count',
    );
    t.ok(performance.now() - started < 5_000, 'and nothing waits for Redis');
  });
});

t.test('RATE_LIMIT_ENABLED=false: nothing counted, no headers, nothing refused', async (t) => {
  const app = await startTestApp({ config: { ...LIMITS, RATE_LIMIT_ENABLED: 'false' } });
  t.teardown(() => app.close());
  const u = await signIn(app, 'unlimited@example.test');
  const answers = [];
  for (let i = 0; i < 6; i++) answers.push(await api(app, 'GET', '/api/v1/users/me', { token: u.accessToken }));
  t.same(
    answers.map((a) => a.status),
    [200, 200, 200, 200, 200, 200],
    'past the free tier of 4 a minute',
  );
  t.ok(
    answers.every((a) => a.headers.get('x-ratelimit-limit') === null),
    'no X-RateLimit headers',
  );
});

t.test('without credentials: the public routes that write count per client address; public reads are not counted', async (t) => {
  const app = await startTestApp({ config: { RATE_LIMIT_ANONYMOUS_PER_MIN: '3' } });
  t.teardown(() => app.close());
  const refreshes = [];
  for (let i = 0; i < 4; i++) refreshes.push(await api(app, 'POST', '/api/auth/refresh', { body: { refreshToken: 'not-a-token' } }));
  t.same(
    refreshes.map((r) => r.status),
    [401, 401, 401, 429],
    'three a minute from this address',
  );
  t.equal(refreshes[0]!.headers.get('x-ratelimit-limit'), '3');
  t.match(refreshes[3]!.body.error, { reason: 'RATE_LIMITED' });
  const register = await api(app, 'POST', '/oauth/register', { body: { redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' } });
  t.equal(register.status, 429, 'one budget across those routes: OAuth registration too (no client written)');
  const { rows } = await app.deps.pool.query(`SELECT count(*)::int AS n FROM oauth_records WHERE model = 'Client'`);
  t.equal(rows[0].n, 0);
  const reads = [];
  for (let i = 0; i < 5; i++) reads.push(await api(app, 'GET', '/api/v1/agents'));
  t.same(
    reads.map((r) => r.status),
    [200, 200, 200, 200, 200],
    'public reads are not counted',
  );
  t.equal(reads[0]!.headers.get('x-ratelimit-limit'), null);
  for (const path of ['/.well-known/oauth-authorization-server', '/oauth/jwks']) {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await api(app, 'GET', path)).status);
    t.same(answers, [200, 200, 200, 200], `${path}: a read of the same route groups, not counted`);
  }
  t.equal(
    (await api(app, 'GET', '/api/auth/username-exists?username=someone')).status,
    200,
    'the username check has a budget of its own: not spent by the writes',
  );
  const authorize = await api(app, 'GET', '/oauth/authorize?client_id=x&response_type=code');
  t.equal(authorize.status, 429, 'an authorization request writes (an interaction): counted, GET or not');
  const u = await signIn(app, 'signed-in@example.test').catch((err: Error) => err);
  t.match(String(u), /lookup .*429/, 'the sign-in steps are public writes too: this address has spent its budget');
  const user = await manyUsers(app, 'limited', 1);
  t.equal((await api(app, 'GET', '/api/v1/users/me', { token: user[0]!.accessToken })).status, 200, 'a caller with credentials has a budget of its own');
});

t.test('GET /api/auth/username-exists: its own budget per client address (RATE_LIMIT_USERNAME_CHECKS_PER_MIN), apart from the writes', async (t) => {
  const app = await startTestApp({ config: { TRUST_PROXY: '1', RATE_LIMIT_USERNAME_CHECKS_PER_MIN: '3', RATE_LIMIT_ANONYMOUS_PER_MIN: '2' } });
  t.teardown(() => app.close());
  const from = (address: string) => ({ 'x-forwarded-for': address });
  const check = (address: string, username = 'someone') => api(app, 'GET', `/api/auth/username-exists?username=${username}`, { headers: from(address) });
  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await check('203.0.113.5', `name${i}`));
  t.same(
    answers.map((a) => a.status),
    [200, 200, 200, 429],
    'three a minute from one address',
  );
  t.same(
    answers.map((a) => a.headers.get('x-ratelimit-limit')),
    ['3', '3', '3', '3'],
  );
  const refused = answers[3]!;
  t.match(refused.body, { success: false, error: { code: 'TOO_MANY_REQUESTS', reason: 'RATE_LIMITED', retryAfterSeconds: Number } });
  const retryAfter = refused.body.error.retryAfterSeconds as number;
  t.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After in the envelope: ${retryAfter} s`);
  t.equal(refused.headers.get('retry-after'), String(retryAfter), 'and in the header');
  t.equal((await check('203.0.113.6')).status, 200, 'another address has its own budget');
  const refresh = await api(app, 'POST', '/api/auth/refresh', { headers: from('203.0.113.5'), body: { refreshToken: 'not-a-token' } });
  t.equal(refresh.status, 401, "the checks spent nothing of that address's budget for writes");
});
