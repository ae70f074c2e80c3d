// Browser-facing and operator surfaces: security headers on every answer, the CORS
// policy (preflight answered), /metrics behind its token, /docs that can be turned off, and the
// lookup throttled per client address as well as per email.
import t from 'tap';
import { buildApp } from '../../api/app.ts';
import { api, startTestApp } from '../support/app.ts';

const PORTAL = 'https://portal.example.test';
const TOKEN = 'metrics-token-0123456789';

t.test('surfaces', async (t) => {
  const app = await startTestApp({ config: { LOOKUP_PER_ADDRESS_PER_HOUR: '3', METRICS_TOKEN: TOKEN, CORS_ORIGINS: PORTAL } });
  t.teardown(() => app.close());

  await t.test('security headers on every answer, errors included', async (t) => {
    for (const [path, status] of [
      ['/api', 200],
      ['/api/v1/users/me', 401],
      ['/nowhere', 404],
    ] as const) {
      const res = await api(app, 'GET', path);
      t.equal(res.status, status, path);
      t.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
      t.equal(res.headers.get('x-frame-options'), 'SAMEORIGIN', path);
      t.match(res.headers.get('strict-transport-security'), /max-age=\d+/, path);
      t.match(res.headers.get('content-security-policy'), /default-src 'none'/, path);
      t.equal(res.headers.get('x-powered-by'), null, path);
    }
  });

  await t.test('CORS: the portal origin is allowed, a preflight is answered, other origins get no grant', async (t) => {
    const preflight = await fetch(`${app.url}/api/v1/users/me`, {
      method: 'OPTIONS',
      headers: { origin: PORTAL, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    t.equal(preflight.status, 204, 'a preflight is answered, not 404');
    t.equal(preflight.headers.get('access-control-allow-origin'), PORTAL);
    t.match(preflight.headers.get('access-control-allow-methods'), /GET/);
    const plain = await api(app, 'GET', '/api', { headers: { origin: PORTAL } });
    t.equal(plain.headers.get('access-control-allow-origin'), PORTAL);
    const stranger = await api(app, 'GET', '/api', { headers: { origin: 'https://evil.example' } });
    t.equal(stranger.headers.get('access-control-allow-origin'), null, 'no grant for another origin');
  });

  await t.test('/metrics needs its bearer token when one is set', async (t) => {
    t.equal((await api(app, 'GET', '/metrics')).status, 401);
    t.equal((await api(app, 'GET', '/metrics', { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status, 401);
    const res = await api(app, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    t.equal(res.status, 200);
    t.match(res.body, /http_request_duration_seconds/);
  });

  await t.test('in production /metrics is closed without a token; /docs can be turned off', async (t) => {
    const production = await buildApp({ ...app.deps, config: { ...app.deps.config, NODE_ENV: 'production', METRICS_TOKEN: undefined, DOCS_ENABLED: false } });
    t.teardown(() => production.close());
    t.equal((await production.inject({ method: 'GET', url: '/metrics' })).statusCode, 404);
    t.equal((await production.inject({ method: 'GET', url: '/docs' })).statusCode, 404);
    t.equal((await production.inject({ method: 'GET', url: '/docs/json' })).statusCode, 404);
    t.equal((await api(app, 'GET', '/docs/json')).status, 200, 'on by default');
  });

  await t.test('lookups are throttled per client address whatever the emails, before anything about the email is said', async (t) => {
    const lookup = (email: string) => api(app, 'POST', '/api/auth/lookup', { body: { email, recaptcha: 'test-captcha', fingerprint: 'f' } });
    const answers = [];
    for (const email of ['a1@example.test', 'a2@example.test', 'a3@example.test', 'a4@example.test']) answers.push(await lookup(email));
    t.same(
      answers.map((a) => a.status),
      [200, 200, 200, 429],
    );
    t.match(answers[3]!.body.error, { reason: 'LOOKUP_THROTTLED', nextRequestAt: String });
    t.notOk('isNewUser' in (answers[3]!.body.data ?? {}), 'nothing about the email');
  });
});
