// GET /api/admin/operations/users/{userId}: an administrator's view of one user (docs/domain-rules.md), read
// from the read models: the user document, MFA, wallets, pools, API keys (metadata only), sessions.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { apiKeyStream } from '../../domain/apikey/decide.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signedApi, type ApiKeyCredentials } from '../support/api-keys.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { totpAt } from '../support/mfa.ts';

const ADMIN = 'admin@example.test';
const VIEW = '/api/admin/operations/users';

t.test('the administrator’s operations view of a user', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const view = (userId: string, token = admin.accessToken) => api(app, 'GET', `${VIEW}/${userId}`, { token });
  const createKey = async (u: SignedIn, body: Record<string, unknown>): Promise<ApiKeyCredentials & { id: string }> => {
    const res = await api(app, 'POST', '/api/api-keys', { token: u.accessToken, body });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return { id: res.body.data.id, apiKey: res.body.data.apiKey, secretKey: res.body.data.secretKey };
  };

  // The user: two sign-ins (one signed out), a follow, a real deposit, two API keys (one revoked), MFA on.
  const dev = await signIn(app, 'dev@example.test');
  const agentId = await followableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    { name: 'Ops Agent', venue: 'SPOT_VENUE', minAllocationUsd: 10 },
    { live: true },
  );
  const first = await signIn(app, 'olga@example.test');
  const second = await signIn(app, 'olga@example.test');
  t.equal((await api(app, 'POST', '/api/auth/sign-out', { body: { refreshToken: second.refreshToken } })).status, 200);
  const user = first;
  t.equal((await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } })).status, 200);
  t.equal((await api(app, 'POST', `/api/admin/wallets/${user.userId}/deposit`, { token: admin.accessToken, body: { amountUsd: 250 } })).status, 200);
  const kept = await createKey(user, { name: 'kept key', scopes: ['wallet:read', 'profile:read'] });
  const revoked = await createKey(user, { name: 'revoked key' });
  t.equal((await api(app, 'DELETE', `/api/api-keys/${revoked.id}`, { token: user.accessToken })).status, 200);
  const { secret: mfaSecret } = (await api(app, 'POST', '/api/v1/users/me/mfa/enrol', { token: user.accessToken })).body.data;
  t.equal((await api(app, 'POST', '/api/v1/users/me/mfa/confirm', { token: user.accessToken, body: { code: totpAt(mfaSecret, new Date()) } })).status, 200);

  const userEvents = await app.deps.store.readStream(userDecider.streamOf(user.userId));
  const keyEvents = [...(await app.deps.store.readStream(apiKeyStream(kept.id))), ...(await app.deps.store.readStream(apiKeyStream(revoked.id)))];

  await t.test('shows the user document, MFA, wallets, pools, API key metadata and sessions', async (t) => {
    const res = await view(user.userId);
    t.equal(res.status, 200, JSON.stringify(res.body));
    const result = res.body.data.result;
    const me = (await api(app, 'GET', '/api/v1/users/me', { token: user.accessToken })).body.data;
    t.match(result, { ...me, updatedAt: String }, 'the user document as GET /api/v1/users/me answers it');
    t.match(result, { role: 'user', tier: 'free', mfaEnabled: true });
    const enabled = userEvents.find((e) => e.type === 'MfaEnabled')!;
    t.equal(result.mfaEnabledAt, new Date((enabled.data as { enabledAt: string }).enabledAt).toISOString(), 'MFA on since its event');

    t.same(result.wallets, [
      { walletContext: 'virtual', balanceUsd: 9900, frozen: false },
      { walletContext: 'real', balanceUsd: 250, frozen: false },
    ]);
    const subscriptions = (await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken })).body.data;
    t.same(result.pools, { count: 1, allocatedUsd: { virtual: 100, real: 0 }, items: subscriptions }, 'each pool as the subscriptions list has it');
    t.match(result.pools.items, [{ agent: agentId, walletContext: 'virtual', allocatedUsd: 100 }]);

    t.equal(result.apiKeys.total, 2);
    t.match(result.apiKeys.items, [
      { id: revoked.id, name: 'revoked key', type: 'platform', status: 'revoked', revokedAt: String, prefix: revoked.apiKey.slice(0, 10) },
      {
        id: kept.id,
        name: 'kept key',
        type: 'platform',
        scopes: ['profile:read', 'wallet:read'],
        status: 'active',
        revokedAt: null,
        expiresAt: null,
        prefix: kept.apiKey.slice(0, 10),
      },
    ]);
    for (const item of result.apiKeys.items) {
      t.same(Object.keys(item).sort(), ['createdAt', 'expiresAt', 'id', 'name', 'prefix', 'revokedAt', 'scopes', 'status', 'type'], 'metadata only');
    }

    t.equal(result.activeSessionCount, 1, 'the signed-out session is not active');
    const starts = userEvents.filter((e) => e.type === 'SessionStarted').map((e) => new Date((e.data as { startedAt: string }).startedAt).toISOString());
    t.equal(starts.length, 2);
    t.equal(result.lastSignInAt, starts.sort().at(-1), 'the newest sign-in, signed out since or not');
  });

  await t.test('holds no key, secret, hash or sealed secret', async (t) => {
    const json = JSON.stringify((await view(user.userId)).body);
    const secrets: Array<[string, string]> = [
      ['API key', kept.apiKey],
      ['API secret', kept.secretKey],
      ['revoked API key', revoked.apiKey],
      ['revoked API secret', revoked.secretKey],
      ['MFA secret', mfaSecret],
      ['refresh token', first.refreshToken],
      ['signed-out refresh token', second.refreshToken],
    ];
    for (const e of [...userEvents, ...keyEvents]) {
      const d = e.data as Record<string, unknown>;
      for (const field of ['keyHash', 'sealedSecret', 'refreshTokenHash', 'userAgentHash'])
        if (typeof d[field] === 'string') secrets.push([`${e.type}.${field}`, d[field] as string]);
    }
    t.equal(secrets.length, 16, 'two key hashes and sealed secrets, the sealed MFA secret, two refresh token and user agent hashes');
    for (const [what, secret] of secrets) t.notOk(json.includes(secret), `no ${what}`);
  });

  await t.test('a frozen wallet shows frozen in every context; a user never active shows defaults', async (t) => {
    t.equal((await api(app, 'POST', `/api/admin/wallets/${user.userId}/freeze`, { token: admin.accessToken })).status, 200);
    t.same(
      (await view(user.userId)).body.data.result.wallets.map((w: { frozen: boolean }) => w.frozen),
      [true, true],
    );
    const res = await view(dev.userId);
    t.equal(res.status, 200);
    t.match(res.body.data.result, {
      id: dev.userId,
      mfaEnabled: false,
      mfaEnabledAt: null,
      wallets: [
        { walletContext: 'virtual', balanceUsd: 10000, frozen: false },
        { walletContext: 'real', balanceUsd: 0, frozen: false },
      ],
      pools: { count: 0, allocatedUsd: { virtual: 0, real: 0 }, items: [] },
      apiKeys: { total: 0, items: [] },
      activeSessionCount: 1,
      lastSignInAt: String,
    });
  });

  await t.test('an administrator’s API key reads it unsigned (the spec’s admin rule) and signed', async (t) => {
    const opsKey = await createKey(admin, { name: 'ops', scopes: ['admin:read'] });
    const unsigned = await signedApi(app, opsKey, 'GET', `${VIEW}/${user.userId}`, { unsigned: true });
    t.equal(unsigned.status, 200, JSON.stringify(unsigned.body));
    t.equal(unsigned.body.data.result.id, user.userId);
    t.equal((await signedApi(app, opsKey, 'GET', `${VIEW}/${user.userId}`)).status, 200);
    const writeOnly = await createKey(admin, { name: 'writer', scopes: ['admin:write'] });
    const refused = await signedApi(app, writeOnly, 'GET', `${VIEW}/${user.userId}`, { unsigned: true });
    t.equal(refused.status, 403);
    t.match(refused.body, { success: false, error: { reason: 'INSUFFICIENT_SCOPE' } });
  });

  await t.test('401 without credentials; 403 ADMIN_REQUIRED for a user and a user’s API key; 404 unknown; 400 malformed', async (t) => {
    const anonymous = await api(app, 'GET', `${VIEW}/${user.userId}`);
    t.equal(anonymous.status, 401);
    t.equal(anonymous.body.error.reason, 'AUTHENTICATION_REQUIRED');
    const self = await view(user.userId, user.accessToken);
    t.equal(self.status, 403);
    t.match(self.body, { success: false, error: { code: 'FORBIDDEN', reason: 'ADMIN_REQUIRED' } });
    const byKey = await signedApi(app, kept, 'GET', `${VIEW}/${user.userId}`);
    t.equal(byKey.status, 403);
    t.match(byKey.body, { success: false, error: { code: 'FORBIDDEN', reason: 'ADMIN_REQUIRED' } });
    const unknown = await view(randomUUID());
    t.equal(unknown.status, 404);
    t.match(unknown.body, { success: false, error: { code: 'NOT_FOUND', reason: 'USER_NOT_FOUND' } });
    const malformed = await view('not-a-user-id');
    t.equal(malformed.status, 400);
    t.match(malformed.body, { success: false, error: { reason: 'VALIDATION_FAILED', message: /userId/ } });
  });

  await t.test('the OpenAPI document describes it: administrators by session or API key, never OAuth', async (t) => {
    const doc = (await api(app, 'GET', '/docs/json')).body;
    const op = doc.paths[`${VIEW}/{userId}`].get;
    t.same(op.security, [{ bearerAuth: [] }, { apiKey: [], apiSignature: [], apiTimestamp: [] }]);
    t.match(op.responses['200'].content['application/json'].schema.properties.data.properties.result.properties, {
      mfaEnabledAt: {},
      wallets: {},
      pools: {},
      apiKeys: {},
    });
  });
});
