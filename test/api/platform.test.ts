import t from 'tap';
import { errorCatalogue } from '../../domain/shared/errors.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

t.test('platform routes', async (t) => {
  const app = await startTestApp({ captureLogs: true });
  t.teardown(() => app.close());

  await t.test('GET /api reports the event store, PostgreSQL, Redis and projector lag', async (t) => {
    const res = await api(app, 'GET', '/api');
    t.equal(res.status, 200);
    t.equal(res.body.success, true);
    t.match(res.body.data, {
      status: 'ok',
      eventStore: { kind: 'postgres', status: 'up' },
      postgres: { status: 'up' },
      redis: { status: 'up' },
    });
    t.ok(Array.isArray(res.body.data.projections));
  });

  await t.test('malformed JSON is a 400 in the envelope, never a 500', async (t) => {
    const res = await api(app, 'POST', '/api/auth/lookup', { rawBody: '{"email": "a@b.c",' });
    t.equal(res.status, 400);
    t.equal(res.body.success, false);
    t.equal(res.body.error.code, 'BAD_REQUEST');
    t.type(res.body.error.message, 'string');
  });

  await t.test('validation errors are a 400 with the comma-joined messages', async (t) => {
    const res = await api(app, 'POST', '/api/auth/lookup', { body: { email: 'not-an-email', fingerprint: 5 } });
    t.equal(res.status, 400);
    t.equal(res.body.error.code, 'BAD_REQUEST');
    t.match(res.body.error.message, /email.*, .*/, res.body.error.message);
  });

  await t.test('a NUL character PostgreSQL cannot store is a 400, and nothing is written', async (t) => {
    const user = await signIn(app, 'nul-user@example.test');
    const before = (await app.deps.pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n;
    const follow = await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId: 'agent\u0000x' } });
    t.equal(follow.status, 400, JSON.stringify(follow.body));
    t.same(follow.body.error, {
      code: 'BAD_REQUEST',
      reason: 'MALFORMED_REQUEST',
      field: 'agentId',
      in: 'body',
      message: 'agentId: text must not contain the NUL character (\\u0000)',
    });
    const listing = await api(app, 'POST', '/api/v1/developers/agents', {
      token: user.accessToken,
      body: { name: 'Nul \u0000 agent', venue: 'SPOT_VENUE' },
    });
    t.equal(listing.status, 400, JSON.stringify(listing.body));
    const after = (await app.deps.pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n;
    t.equal(after, before, 'no event appended (listing would have made the caller a developer first)');
    const byPath = await api(app, 'GET', '/api/v1/agents/agent%00x');
    t.equal(byPath.status, 400, 'in a path too, before any read');
    t.same(byPath.body.error, {
      code: 'BAD_REQUEST',
      reason: 'MALFORMED_REQUEST',
      field: 'id',
      in: 'path',
      message: 'id: text must not contain the NUL character (\\u0000)',
    });
  });

  await t.test('an unknown route is a 404 in the envelope', async (t) => {
    const res = await api(app, 'GET', '/api/v1/nothing-here');
    t.equal(res.status, 404);
    t.same(res.body, { success: false, error: { code: 'NOT_FOUND', reason: 'ROUTE_NOT_FOUND', message: 'route GET /api/v1/nothing-here not found' } });
  });

  await t.test('the request id is echoed and becomes the events correlationId', async (t) => {
    const user = await signIn(app, 'corr@example.test');
    const res = await api(app, 'POST', '/api/v1/developers/agents', {
      token: user.accessToken,
      headers: { 'x-request-id': 'req-correlation-42' },
      body: { name: 'Correlated', venue: 'SPOT_VENUE' },
    });
    t.equal(res.status, 201);
    t.equal(res.headers.get('x-request-id'), 'req-correlation-42');
    const events = await app.deps.store.readStream(`agent-${res.body.data.id}`);
    t.ok(events.length > 0);
    t.ok(
      events.every((e) => e.metadata.correlationId === 'req-correlation-42'),
      'every event of the command carries it',
    );
    t.equal(events[0]!.metadata.actor, user.userId);
  });

  await t.test('OpenAPI 3 is generated from the route schemas and served at /docs', async (t) => {
    const doc = await api(app, 'GET', '/docs/json');
    t.equal(doc.status, 200);
    t.match(doc.body.openapi, /^3\./);
    const paths = [
      '/api',
      '/api/auth/lookup',
      '/api/v1/users/me',
      '/api/v1/users/me/subscriptions',
      '/api/v1/developers/agents',
      '/api/v1/trades',
      '/api/v1/developers/agents/{id}/signals',
      '/api/v1/developers/agents/{id}/signals/{signalId}/replay',
    ];
    for (const path of paths) {
      t.ok(doc.body.paths[path], `documents ${path}`);
    }
    t.ok(doc.body.paths['/api/auth/lookup'].post.requestBody, 'request bodies come from the zod schemas');
    const envelope = doc.body.components.schemas.ErrorEnvelope;
    t.same(envelope.properties.error.properties.reason.enum, Object.keys(errorCatalogue), 'every reason of the error catalogue is listed');
    t.match(envelope['x-error-catalogue'], [{ reason: 'VALIDATION_FAILED', status: 400, code: 'BAD_REQUEST' }]);
    t.ok(
      envelope['x-error-catalogue'].some(
        (e: { reason: string; status: number; code: string }) => e.reason === 'WALLET_FROZEN' && e.status === 403 && e.code === 'WALLET_FROZEN',
      ),
      'named codes of the spec',
    );
    t.ok(
      envelope['x-error-catalogue'].some((e: { reason: string; status: number }) => e.reason === 'BUSY' && e.status === 503),
      'the contention refusal',
    );
    const ui = await fetch(`${app.url}/docs`, { redirect: 'follow' });
    t.equal(ui.status, 200);
  });

  await t.test('/metrics serves request latency, command counts and projector lag', async (t) => {
    const res = await api(app, 'GET', '/metrics');
    t.equal(res.status, 200);
    t.match(res.body, /http_request_duration_seconds_bucket/);
    t.match(res.body, /commands_total\{/);
    t.match(res.body, /projector_lag_seconds_bucket/);
    t.match(res.body, /projector_lag_events/);
  });

  await t.test('logs carry request ids and never tokens or login codes', async (t) => {
    const user = await signIn(app, 'logs@example.test');
    const code = /\b(\d{6})\b/.exec(app.mails.find((m) => m.to === 'logs@example.test')!.text)![1]!;
    await api(app, 'POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken }, headers: { 'user-agent': 'test-agent/1.0' } });
    await api(app, 'GET', '/api/v1/users/me', { token: user.accessToken });
    const text = app.logs.join('');
    t.match(text, /"reqId"/, 'request log lines carry the request id');
    t.notOk(text.includes(user.accessToken), 'no access token');
    t.notOk(text.includes(user.refreshToken), 'no refresh token');
    t.notOk(text.includes(code), 'no login code');
  });
});
