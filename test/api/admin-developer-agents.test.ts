import t from 'tap';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

t.test('admin review of developer agents', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  const stranger = await signIn(app, 'stranger@example.test');

  const listAgent = async (name: string) => {
    const res = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: { name } });
    t.equal(res.status, 201);
    return res.body.data as { id: string; inboundWebhookSigningSecretReveal: string };
  };
  const decide = (id: string, decision: string, token: string | undefined, body: unknown = {}) =>
    api(app, 'POST', `/api/admin/developer-agents/${id}/${decision}`, { token, body });
  const reviews = (id: string, token = dev.accessToken, query = '') => api(app, 'GET', `/api/v1/developers/agents/${id}/reviews${query}`, { token });

  await t.test('approve moves pending-review to beta and answers the developer agent record', async (t) => {
    const agent = await listAgent('To approve');
    const res = await decide(agent.id, 'approve', admin.accessToken, {});
    t.equal(res.status, 200);
    t.match(res.body, { success: true, data: { id: agent.id, developerId: dev.userId, name: 'To approve', betaStatus: 'beta' } });
    t.match(res.body.data.betaStartDate, /^\d{4}-\d\d-\d\dT/);
    t.equal(res.body.data.inboundSignalsHttpUrl, `${app.url}/api/v1/signals/${agent.id}`);
    t.notOk('inboundWebhookSigningSecretReveal' in res.body.data, 'the secret is not shown again');
    t.notOk(JSON.stringify(res.body).includes(agent.inboundWebhookSigningSecretReveal));

    const history = await reviews(agent.id);
    t.equal(history.status, 200);
    t.equal(history.body.data.items.length, 1, 'one review record');
    t.match(history.body.data.items[0], { status: 'approve', notes: '' });
    t.notOk('safetyScore' in history.body.data.items[0], 'no score was given');
  });

  await t.test('an approve without any body is accepted', async (t) => {
    const agent = await listAgent('No body');
    const res = await api(app, 'POST', `/api/admin/developer-agents/${agent.id}/approve`, { token: admin.accessToken });
    t.equal(res.status, 200);
    t.equal(res.body.data.betaStatus, 'beta');
  });

  await t.test('reject moves pending-review to rejected with notes and a safety score', async (t) => {
    const agent = await listAgent('To reject');
    const res = await decide(agent.id, 'reject', admin.accessToken, { notes: 'no risk controls', safetyScore: 12 });
    t.equal(res.status, 200);
    t.equal(res.body.data.betaStatus, 'rejected');
    const history = await reviews(agent.id);
    t.match(history.body.data.items, [{ status: 'reject', notes: 'no risk controls', safetyScore: 12 }]);
  });

  await t.test('promote moves beta to live; every decision appends a review record, newest first', async (t) => {
    const agent = await listAgent('To promote');
    t.equal((await decide(agent.id, 'approve', admin.accessToken, { notes: 'ok for beta', safetyScore: 70 })).status, 200);
    const res = await decide(agent.id, 'promote', admin.accessToken, { notes: 'proved itself', safetyScore: 90 });
    t.equal(res.status, 200);
    t.equal(res.body.data.betaStatus, 'live');

    const history = await reviews(agent.id);
    t.match(history.body.data.items, [
      { status: 'promote', notes: 'proved itself', safetyScore: 90 },
      { status: 'approve', notes: 'ok for beta', safetyScore: 70 },
    ]);
    t.same(history.body.data.pagination, { total: 2, limit: 20, page: 1, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    const ids = history.body.data.items.map((i: { id: string }) => i.id);
    t.equal(new Set(ids).size, 2, 'each review has its own id');

    const page2 = await reviews(agent.id, dev.accessToken, '?limit=1&page=2');
    t.match(page2.body.data.items, [{ status: 'approve' }]);
    t.match(page2.body.data.pagination, { total: 2, totalPages: 2, hasNextPage: false, hasPreviousPage: true });
  });

  await t.test('an invalid move is 409 CONFLICT and appends no review', async (t) => {
    const agent = await listAgent('Moves');
    const early = await decide(agent.id, 'promote', admin.accessToken);
    t.equal(early.status, 409, 'promote before approval');
    t.equal(early.body.error.code, 'CONFLICT');
    t.match(early.body.error.message, /pending-review/);
    await decide(agent.id, 'approve', admin.accessToken);
    t.equal((await decide(agent.id, 'approve', admin.accessToken)).status, 409, 'approve twice');
    t.equal((await decide(agent.id, 'reject', admin.accessToken)).status, 409, 'reject a beta agent');
    await decide(agent.id, 'promote', admin.accessToken);
    t.equal((await decide(agent.id, 'promote', admin.accessToken)).status, 409, 'promote a live agent');
    t.equal((await reviews(agent.id)).body.data.items.length, 2, 'only the valid decisions are recorded');

    const rejected = await listAgent('Rejected');
    await decide(rejected.id, 'reject', admin.accessToken);
    t.equal((await decide(rejected.id, 'approve', admin.accessToken)).status, 409, 'approve a rejected agent');
  });

  await t.test('only administrators decide: 401 without a caller, 403 for anyone else', async (t) => {
    const agent = await listAgent('Guarded');
    for (const decision of ['approve', 'reject', 'promote']) {
      const anonymous = await decide(agent.id, decision, undefined);
      t.equal(anonymous.status, 401, `${decision} unauthenticated`);
      const developer = await decide(agent.id, decision, dev.accessToken);
      t.equal(developer.status, 403, `${decision} by the agent's own developer`);
      t.equal(developer.body.error.code, 'FORBIDDEN');
      t.equal((await decide(agent.id, decision, stranger.accessToken)).status, 403, `${decision} by another user`);
    }
    t.equal((await reviews(agent.id)).body.data.items.length, 0);
  });

  await t.test('an unknown agent is 404 for every decision', async (t) => {
    for (const decision of ['approve', 'reject', 'promote']) {
      const res = await decide('no-such-agent', decision, admin.accessToken);
      t.equal(res.status, 404, decision);
      t.equal(res.body.error.code, 'NOT_FOUND');
    }
  });

  await t.test('an invalid review body is 400', async (t) => {
    const agent = await listAgent('Scored');
    const res = await decide(agent.id, 'approve', admin.accessToken, { safetyScore: 101 });
    t.equal(res.status, 400);
    t.match(res.body.error.message, /safetyScore must be from 0 to 100/);
    t.equal((await decide(agent.id, 'approve', admin.accessToken, { notes: 5 })).status, 400);
  });

  await t.test('the review history is for the owning developer only', async (t) => {
    const agent = await listAgent('Private history');
    t.equal((await api(app, 'GET', `/api/v1/developers/agents/${agent.id}/reviews`)).status, 401, 'unauthenticated');
    const notOwner = await reviews(agent.id, stranger.accessToken);
    t.equal(notOwner.status, 403, 'another user');
    t.equal(notOwner.body.error.code, 'FORBIDDEN');
    const unknown = await reviews('no-such-agent');
    t.equal(unknown.status, 404, 'unknown agent');
    t.equal(unknown.body.error.code, 'NOT_FOUND');
    t.same((await reviews(agent.id)).body.data.items, [], 'no decisions yet');
  });
});
