// The profile routes through real HTTP: the guide agent, interests and pinned agents, in every
// mode a user route takes (session, signed API key; OAuth by the declared security), each status.
import t, { type Test } from 'tap';
import { api, apiWithConfig, startTestApp, type TestApp } from '../support/app.ts';
import { signedApi, type ApiKeyCredentials } from '../support/api-keys.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';

const ADMIN = 'admin@example.test';
const ME = '/api/v1/users/me';
const GUIDE = `${ME}/guide-agent`;
const INTERESTS = `${ME}/interests`;
const pinPath = (id: string) => `/api/v1/agents/${id}/pin`;

async function keyOf(app: TestApp, user: SignedIn, scopes: string[]): Promise<ApiKeyCredentials> {
  const res = await api(app, 'POST', '/api/api-keys', { token: user.accessToken, body: { name: scopes.join(' '), scopes } });
  if (res.status !== 201) throw new Error(`key: ${res.status} ${JSON.stringify(res.body)}`);
  return { apiKey: res.body.data.apiKey, secretKey: res.body.data.secretKey };
}

const refused = (t: Test, res: { status: number; body: any }, status: number, code: string, reason?: string) => {
  t.equal(res.status, status, JSON.stringify(res.body));
  t.match(res.body, { success: false, error: { code, ...(reason ? { reason } : {}) } });
};

t.test('profile routes', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const [admin, dev] = [await signIn(app, ADMIN), await signIn(app, 'dev@example.test')];
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  const beta = await followableAgent(app, tokens, { name: 'Guide beta', venue: 'SPOT_VENUE' });
  const live = await followableAgent(app, tokens, { name: 'Guide live' }, { live: true });
  const pending = (await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: { name: 'Pending' } })).body.data.id as string;
  const doomed = await followableAgent(app, tokens, { name: 'Doomed' });
  const remove = async (id: string) => t.equal((await api(app, 'DELETE', `/api/v1/agents/${id}`, { token: dev.accessToken })).status, 200, 'agent deleted');
  const userEvents = async (user: SignedIn, type: string) => (await app.deps.store.readStream(`user-${user.userId}`)).filter((e) => e.type === type).length;

  await t.test('the OpenAPI document has the routes with their scopes in every mode, and the interests rule', async (t) => {
    const { paths } = (await api(app, 'GET', '/docs/json')).body;
    const routes = [
      [GUIDE, 'get', 'profile:read'],
      [GUIDE, 'post', 'profile:write'],
      [INTERESTS, 'post', 'profile:write'],
      ['/api/v1/agents/{id}/pin', 'post', 'profile:write'],
      ['/api/v1/agents/{id}/pin', 'delete', 'profile:write'],
    ];
    for (const [path, method, scope] of routes) {
      const op = paths[path!]?.[method!];
      t.ok(op, `${method} ${path}`);
      t.same(op?.security, [{ bearerAuth: [] }, { apiKey: [], apiSignature: [], apiTimestamp: [] }, { oauth2: [scope] }], `${method} ${path}: ${scope}`);
    }
    const interests = paths[INTERESTS].post.requestBody.content['application/json'].schema.properties.interests;
    t.match(interests, { minItems: 1, maxItems: 20, items: { minLength: 1, maxLength: 40 } });
    t.ok(paths[GUIDE].get.responses['200'], 'the guide agent answer is described');
  });

  await t.test('a new user has no guide agent, no interests, no pins: data null, empty lists', async (t) => {
    const ann = await signIn(app, 'ann@example.test');
    const guide = await api(app, 'GET', GUIDE, { token: ann.accessToken });
    t.equal(guide.status, 200);
    t.same(guide.body, { success: true, data: null });
    t.match((await api(app, 'GET', ME, { token: ann.accessToken })).body.data, { guideAgentId: null, interests: [], pinnedAgentIds: [] });
  });

  await t.test('POST guide-agent answers the user document; GET answers the record the listing shows', async (t) => {
    const bo = await signIn(app, 'bo@example.test');
    const chosen = await api(app, 'POST', GUIDE, { token: bo.accessToken, body: { guideAgentId: beta } });
    t.equal(chosen.status, 200, JSON.stringify(chosen.body));
    t.match(chosen.body.data, { id: bo.userId, email: 'bo@example.test', guideAgentId: beta, interests: [], pinnedAgentIds: [] });
    const listed = await api(app, 'GET', `/api/v1/agents/${beta}`);
    t.same((await api(app, 'GET', GUIDE, { token: bo.accessToken })).body, listed.body, 'the same agent record');
    t.equal(
      (await api(app, 'POST', GUIDE, { token: bo.accessToken, body: { guideAgentId: ` ${live} ` } })).body.data.guideAgentId,
      live,
      'a live agent replaces it',
    );
    t.equal((await api(app, 'POST', GUIDE, { token: bo.accessToken, body: { guideAgentId: live } })).status, 200, 'the same one again');
    t.equal(await userEvents(bo, 'GuideAgentChosen'), 2, 'the repeat recorded nothing');
    t.equal((await api(app, 'GET', GUIDE, { token: bo.accessToken })).body.data.id, live);
  });

  await t.test('POST guide-agent: 404 unknown, pending or deleted agent; 400 malformed; 401; nothing written', async (t) => {
    const cy = await signIn(app, 'cy@example.test');
    await api(app, 'POST', GUIDE, { token: cy.accessToken, body: { guideAgentId: beta } });
    const gone = await followableAgent(app, tokens, { name: 'Gone soon' });
    await remove(gone);
    for (const id of ['no-such-agent', pending, gone])
      refused(t, await api(app, 'POST', GUIDE, { token: cy.accessToken, body: { guideAgentId: id } }), 404, 'NOT_FOUND', 'AGENT_NOT_FOUND');
    for (const body of [{}, { guideAgentId: '' }, { guideAgentId: 7 }, { guideAgentId: beta, extra: 1 }, { guideAgentId: 'x'.repeat(101) }]) {
      refused(t, await api(app, 'POST', GUIDE, { token: cy.accessToken, body }), 400, 'BAD_REQUEST', 'VALIDATION_FAILED');
    }
    refused(t, await api(app, 'POST', GUIDE, { body: { guideAgentId: beta } }), 401, 'UNAUTHORIZED');
    refused(t, await api(app, 'GET', GUIDE), 401, 'UNAUTHORIZED');
    t.equal((await api(app, 'GET', ME, { token: cy.accessToken })).body.data.guideAgentId, beta, 'the guide is unchanged');
  });

  await t.test('a guide agent deleted afterwards: GET answers data null', async (t) => {
    const di = await signIn(app, 'di@example.test');
    t.equal((await api(app, 'POST', GUIDE, { token: di.accessToken, body: { guideAgentId: doomed } })).status, 200);
    await remove(doomed);
    t.same((await api(app, 'GET', GUIDE, { token: di.accessToken })).body, { success: true, data: null });
  });

  await t.test('POST interests trims, keeps distinct ignoring case, replaces the list', async (t) => {
    const ed = await signIn(app, 'ed@example.test');
    const first = await api(app, 'POST', INTERESTS, { token: ed.accessToken, body: { interests: ['  Solana ', 'DeFi', 'solana', 'DEFI', 'Memes'] } });
    t.equal(first.status, 200, JSON.stringify(first.body));
    t.match(first.body.data, { id: ed.userId, interests: ['Solana', 'DeFi', 'Memes'] });
    const twenty = Array.from({ length: 20 }, (_, i) => `${'t'.repeat(38)}${String(i).padStart(2, '0')}`);
    t.same((await api(app, 'POST', INTERESTS, { token: ed.accessToken, body: { interests: twenty } })).body.data.interests, twenty, '20 of 40 characters');
    t.same((await api(app, 'GET', ME, { token: ed.accessToken })).body.data.interests, twenty, 'a later read sees them');
  });

  await t.test('POST interests: 400 beyond the rule (nothing written), 401', async (t) => {
    const fi = await signIn(app, 'fi@example.test');
    await api(app, 'POST', INTERESTS, { token: fi.accessToken, body: { interests: ['kept'] } });
    const bad = [
      { interests: [] },
      { interests: Array.from({ length: 21 }, (_, i) => `i${i}`) },
      { interests: ['x'.repeat(41)] },
      { interests: ['   '] },
      { interests: 'defi' },
      { interests: [1] },
      {},
      { interests: ['a'], more: true },
    ];
    for (const body of bad) refused(t, await api(app, 'POST', INTERESTS, { token: fi.accessToken, body }), 400, 'BAD_REQUEST', 'VALIDATION_FAILED');
    t.match(
      (await api(app, 'POST', INTERESTS, { token: fi.accessToken, body: { interests: ['x'.repeat(41)] } })).body.error.message,
      /interests\.0: interest must be 1 to 40 characters/,
    );
    t.same((await api(app, 'GET', ME, { token: fi.accessToken })).body.data.interests, ['kept']);
    t.equal(await userEvents(fi, 'InterestsReplaced'), 1);
    refused(t, await api(app, 'POST', INTERESTS, { body: { interests: ['x'] } }), 401, 'UNAUTHORIZED');
  });

  await t.test('pins: POST adds, a repeat answers unchanged without an event, DELETE removes; the user document shows them', async (t) => {
    const gil = await signIn(app, 'gil@example.test');
    const one = await api(app, 'POST', pinPath(beta), { token: gil.accessToken });
    t.same(one.body, { success: true, data: { pinnedAgentIds: [beta], message: 'Agent pinned' } });
    t.same((await api(app, 'POST', pinPath(live), { token: gil.accessToken })).body.data.pinnedAgentIds, [beta, live]);
    t.same((await api(app, 'POST', pinPath(beta), { token: gil.accessToken })).body.data, { pinnedAgentIds: [beta, live], message: 'Agent already pinned' });
    t.equal(await userEvents(gil, 'AgentPinned'), 2);
    t.same((await api(app, 'GET', ME, { token: gil.accessToken })).body.data.pinnedAgentIds, [beta, live]);
    t.same((await api(app, 'DELETE', pinPath(beta), { token: gil.accessToken })).body, {
      success: true,
      data: { pinnedAgentIds: [live], message: 'Agent unpinned' },
    });
    t.same((await api(app, 'DELETE', pinPath(beta), { token: gil.accessToken })).body.data, { pinnedAgentIds: [live], message: 'Agent was not pinned' });
    t.equal(await userEvents(gil, 'AgentUnpinned'), 1);
    t.same((await api(app, 'GET', ME, { token: gil.accessToken })).body.data.pinnedAgentIds, [live]);
  });

  await t.test('pins: 404 for an unknown, pending or deleted agent; a pinned agent deleted since can be unpinned; 401', async (t) => {
    const hu = await signIn(app, 'hu@example.test');
    const pinnedThenGone = await followableAgent(app, tokens, { name: 'Pinned then gone' });
    t.equal((await api(app, 'POST', pinPath(pinnedThenGone), { token: hu.accessToken })).status, 200);
    await remove(pinnedThenGone);
    for (const id of ['no-such-agent', pending, pinnedThenGone])
      refused(t, await api(app, 'POST', pinPath(id), { token: hu.accessToken }), 404, 'NOT_FOUND', 'AGENT_NOT_FOUND');
    refused(t, await api(app, 'DELETE', pinPath('no-such-agent'), { token: hu.accessToken }), 404, 'NOT_FOUND', 'AGENT_NOT_FOUND');
    t.same((await api(app, 'DELETE', pinPath(pinnedThenGone), { token: hu.accessToken })).body.data.pinnedAgentIds, [], 'unpinned all the same');
    refused(t, await api(app, 'DELETE', pinPath(pinnedThenGone), { token: hu.accessToken }), 404, 'NOT_FOUND', 'AGENT_NOT_FOUND');
    refused(t, await api(app, 'POST', pinPath('x'.repeat(101)), { token: hu.accessToken }), 414, 'URI_TOO_LONG', 'URI_TOO_LONG');
    refused(t, await api(app, 'POST', pinPath(beta)), 401, 'UNAUTHORIZED');
    refused(t, await api(app, 'DELETE', pinPath(beta)), 401, 'UNAUTHORIZED');
  });

  await t.test('pins: 20 are kept, the 21st is 400 TOO_MANY_PINS and changes nothing', async (t) => {
    const ida = await signIn(app, 'ida@example.test');
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) ids.push(await followableAgent(app, tokens, { name: `Pin ${i}` }));
    for (const id of ids.slice(0, 20)) t.equal((await api(app, 'POST', pinPath(id), { token: ida.accessToken })).status, 200);
    const over = await api(app, 'POST', pinPath(ids[20]!), { token: ida.accessToken });
    refused(t, over, 400, 'BAD_REQUEST', 'TOO_MANY_PINS');
    t.equal(over.body.error.maxPins, 20);
    t.same((await api(app, 'GET', ME, { token: ida.accessToken })).body.data.pinnedAgentIds, ids.slice(0, 20));
    t.equal((await api(app, 'POST', pinPath(ids[3]!), { token: ida.accessToken })).status, 200, 'a pinned one answers unchanged at the limit');
    t.equal((await api(app, 'DELETE', pinPath(ids[0]!), { token: ida.accessToken })).status, 200);
    t.same(
      (await api(app, 'POST', pinPath(ids[20]!), { token: ida.accessToken })).body.data.pinnedAgentIds,
      [...ids.slice(1, 20), ids[20]],
      'an unpin frees a place',
    );
  });

  await t.test('a signed API key acts within its scopes: profile:read reads, profile:write is 403 without it', async (t) => {
    const jo = await signIn(app, 'jo@example.test');
    const reader = await keyOf(app, jo, ['profile:read']);
    const writer = await keyOf(app, jo, ['profile:read', 'profile:write']);
    const writes: Array<[string, string, unknown?]> = [
      ['POST', GUIDE, { guideAgentId: beta }],
      ['POST', INTERESTS, { interests: ['keys'] }],
      ['POST', pinPath(beta)],
      ['DELETE', pinPath(beta)],
    ];
    for (const [method, path, body] of writes) {
      refused(t, await signedApi(app, reader, method, path, body ? { body } : {}), 403, 'FORBIDDEN', 'INSUFFICIENT_SCOPE');
      t.equal((await signedApi(app, writer, method, path, body ? { body } : {})).status, 200, `${method} ${path} with profile:write`);
    }
    t.equal((await signedApi(app, reader, 'GET', GUIDE)).body.data.id, beta);
    const noProfile = await keyOf(app, jo, ['wallet:read']);
    refused(t, await signedApi(app, noProfile, 'GET', GUIDE), 403, 'FORBIDDEN', 'INSUFFICIENT_SCOPE');
    refused(t, await signedApi(app, writer, 'POST', INTERESTS, { body: { interests: ['x'] }, unsigned: true }), 401, 'UNAUTHORIZED');
  });

  await t.test('past the tier the routes answer 429 in the envelope', async (t) => {
    const limited = await apiWithConfig(app, { RATE_LIMIT_FREE_PER_MIN: 1 });
    t.teardown(() => limited.close());
    const kit = await signIn(app, 'kit@example.test');
    t.equal((await api(limited, 'GET', ME, { token: kit.accessToken })).status, 200, 'the one request of the minute');
    const routes: Array<[string, string, unknown?]> = [
      ['GET', GUIDE],
      ['POST', GUIDE, { guideAgentId: beta }],
      ['POST', INTERESTS, { interests: ['x'] }],
      ['POST', pinPath(beta)],
      ['DELETE', pinPath(beta)],
    ];
    for (const [method, path, body] of routes) {
      const res = await api(limited, method, path, { token: kit.accessToken, ...(body ? { body } : {}) });
      refused(t, res, 429, 'TOO_MANY_REQUESTS', 'RATE_LIMITED');
      t.ok(Number(res.headers.get('retry-after')) > 0, `${method} ${path}: Retry-After`);
    }
  });
});
