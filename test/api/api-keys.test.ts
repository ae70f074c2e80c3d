// API keys: creation, listing and revocation through HTTP with every status of the spec's
// table, request signing exactly as Authentication point 3 says, scopes, and the attack table.
import t from 'tap';
import { apiKeyStream } from '../../domain/apikey/decide.ts';
import { hashApiKey, keyEncryptionKeyOf, requestSignature } from '../../infra/api-keys.ts';
import { api, apiWithConfig, startTestApp } from '../support/app.ts';
import { signedApi, type ApiKeyCredentials } from '../support/api-keys.ts';
import { signIn, type SignedIn } from '../support/auth.ts';

const ADMIN = 'admin@example.test';
const KEYS = '/api/api-keys';

t.test('API keys', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN }, captureLogs: true });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const alice = await signIn(app, 'alice@example.test');
  const bob = await signIn(app, 'bob@example.test');
  const create = (u: SignedIn, body: unknown) => api(app, 'POST', KEYS, { token: u.accessToken, body });
  const keyOf = async (u: SignedIn, body: Record<string, unknown> = {}): Promise<ApiKeyCredentials & { id: string }> => {
    const res = await create(u, { name: 'test key', ...body });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    reveals.push(res.body.data.apiKey, res.body.data.secretKey);
    return { id: res.body.data.id, apiKey: res.body.data.apiKey, secretKey: res.body.data.secretKey };
  };
  const reveals: string[] = [];

  await t.test('POST /api/api-keys: 201 with the key and secret once; defaults; every refusal of the spec', async (t) => {
    const res = await create(alice, { name: '  trading bot  ' });
    t.equal(res.status, 201, JSON.stringify(res.body));
    const d = res.body.data;
    t.match(d, { id: String, name: 'trading bot', type: 'platform', expiresAt: null, apiKey: /^ak_/, secretKey: /^sk_/, prefix: d.apiKey.slice(0, 10) });
    t.notOk(
      d.scopes.some((s: string) => s.startsWith('admin:') || s.startsWith('keys:')),
      'non-admin by default, no key management',
    );
    t.ok(d.scopes.includes('wallet:trade'));
    reveals.push(d.apiKey, d.secretKey);
    const events = await app.deps.store.readStream(apiKeyStream(d.id));
    t.same(
      events.map((e) => [e.type, e.metadata.actor]),
      [['ApiKeyCreated', alice.userId]],
      'an event with the owner as actor',
    );
    const stored = JSON.stringify(events[0]!.data);
    t.notOk(stored.includes(d.apiKey) || stored.includes(d.secretKey), 'the event holds neither the key nor the secret');

    const table: Array<[unknown, number, string]> = [
      [{}, 400, 'VALIDATION_FAILED'],
      [{ name: '' }, 400, 'VALIDATION_FAILED'],
      [{ name: 'x'.repeat(101) }, 400, 'VALIDATION_FAILED'],
      [{ name: 'k', scopes: ['wallet:fly'] }, 400, 'VALIDATION_FAILED'],
      [{ name: 'k', scopes: ['admin:read'] }, 400, 'VALIDATION_FAILED'],
      [{ name: 'k', scopes: [] }, 400, 'VALIDATION_FAILED'],
      [{ name: 'k', expiresAt: '2001-01-01T00:00:00Z' }, 400, 'VALIDATION_FAILED'],
      [{ name: 'k', expiresAt: 'tomorrow' }, 400, 'VALIDATION_FAILED'],
      [{ name: 'k', type: 'developer' }, 403, 'KEY_TYPE_NOT_ALLOWED'],
      [{ name: 'k', type: 'internal' }, 403, 'KEY_TYPE_NOT_ALLOWED'],
      [{ name: 'k', type: 'root' }, 400, 'VALIDATION_FAILED'],
    ];
    for (const [body, status, reason] of table) {
      const r = await create(alice, body);
      t.equal(r.status, status, JSON.stringify(body));
      t.equal(r.body.error.reason, reason, JSON.stringify(body));
    }
    t.equal((await api(app, 'POST', KEYS, { body: { name: 'k' } })).status, 401, '401 without credentials');
    const legacy = await create(alice, { name: 'legacy', scopes: ['agents:read', 'bots:write', 'wallet:read'] });
    t.same(legacy.body.data.scopes, ['marketplace:read', 'subscriptions:write', 'wallet:read'], 'legacy aliases become the canonical scopes');
    const adminKey = await create(admin, { name: 'ops', scopes: ['admin:*'] });
    t.same(adminKey.body.data.scopes, ['admin:read', 'admin:write'], 'admin:* only for administrators');
  });

  await t.test("GET /api/api-keys lists the caller's keys, paginated, never a hash or a secret", async (t) => {
    const res = await api(app, 'GET', `${KEYS}?limit=2`, { token: alice.accessToken });
    t.equal(res.status, 200);
    t.equal(res.body.data.items.length, 2);
    t.match(res.body.data.pagination, { total: 2, limit: 2, page: 1 });
    for (const item of res.body.data.items)
      t.same(Object.keys(item).sort(), ['createdAt', 'expiresAt', 'id', 'name', 'prefix', 'revokedAt', 'scopes', 'status', 'type']);
    t.notOk(JSON.stringify(res.body).includes(reveals[0]!) || JSON.stringify(res.body).includes(reveals[1]!));
    t.equal((await api(app, 'GET', KEYS, { token: bob.accessToken })).body.data.pagination.total, 0, "another user's list is theirs");
    t.equal((await api(app, 'GET', KEYS)).status, 401);
  });

  await t.test("a signed request acts as the key's owner within its scopes", async (t) => {
    const key = await keyOf(alice);
    const me = await signedApi(app, key, 'GET', '/api/v1/users/me');
    t.equal(me.status, 200, JSON.stringify(me.body));
    t.equal(me.body.data.id, alice.userId);
    const withQuery = await signedApi(app, key, 'GET', '/api/v1/trades?limit=5&page=1');
    t.equal(withQuery.status, 200, 'the path is signed with its query as sent');
    const post = await signedApi(app, key, 'PATCH', '/api/v1/users/me', { body: { languageCode: 'fr' } });
    t.equal(post.status, 200, JSON.stringify(post.body));
    t.equal(post.body.data.languageCode, 'fr');
  });

  await t.test('the attack table: each forged or misused request is refused', async (t) => {
    const key = await keyOf(alice);
    const refused = async (what: string, res: { status: number; body: any }, status: number, reason: string) => {
      t.equal(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
      t.equal(res.body?.error?.reason, reason, what);
    };
    const body = { languageCode: 'de' };
    await refused(
      'tampered body',
      await signedApi(app, key, 'PATCH', '/api/v1/users/me', { body, signed: { body: JSON.stringify({ languageCode: 'en' }) } }),
      401,
      'INVALID_SIGNATURE',
    );
    await refused('tampered path', await signedApi(app, key, 'GET', '/api/v1/wallet', { signed: { path: '/api/v1/users/me' } }), 401, 'INVALID_SIGNATURE');
    await refused(
      'tampered query',
      await signedApi(app, key, 'GET', '/api/v1/trades?limit=50', { signed: { path: '/api/v1/trades?limit=5' } }),
      401,
      'INVALID_SIGNATURE',
    );
    await refused('wrong method', await signedApi(app, key, 'GET', '/api/v1/users/me', { signed: { method: 'POST' } }), 401, 'INVALID_SIGNATURE');
    await refused(
      'old timestamp',
      await signedApi(app, key, 'GET', '/api/v1/users/me', { timestampMs: Date.now() - 5 * 60_000 - 5_000 }),
      401,
      'INVALID_SIGNATURE',
    );
    await refused(
      'future timestamp',
      await signedApi(app, key, 'GET', '/api/v1/users/me', { timestampMs: Date.now() + 5 * 60_000 + 5_000 }),
      401,
      'INVALID_SIGNATURE',
    );
    await refused('no signature', await signedApi(app, key, 'GET', '/api/v1/users/me', { unsigned: true }), 401, 'INVALID_SIGNATURE');
    await refused('malformed signature', await signedApi(app, key, 'GET', '/api/v1/users/me', { signature: 'zz' }), 401, 'INVALID_SIGNATURE');
    await refused(
      'uppercase hex',
      await signedApi(app, key, 'GET', '/api/v1/users/me', { signature: (await signedApi(app, key, 'GET', '/api/v1/users/me')).signature.toUpperCase() }),
      401,
      'INVALID_SIGNATURE',
    );
    // A body the signature cannot cover (only JSON bodies are kept raw): added to a signed request that had none.
    const bodyless = await keyOf(alice, { scopes: ['keys:write'] });
    const timestamp = String(Date.now());
    const path = `${KEYS}/${bodyless.id}`;
    const smuggled = await fetch(`${app.url}${path}`, {
      method: 'DELETE',
      headers: {
        'x-api-key': bodyless.apiKey,
        'x-timestamp': timestamp,
        'x-signature': requestSignature(bodyless.secretKey, { timestamp, method: 'DELETE', path, body: '' }),
        'content-type': 'text/plain',
      },
      body: 'anything at all',
    });
    await refused('a text/plain body on a request signed without one', { status: smuggled.status, body: await smuggled.json() }, 401, 'INVALID_SIGNATURE');
    const ts = Date.now();
    const original = await signedApi(app, key, 'GET', '/api/v1/wallet', { timestampMs: ts });
    t.equal(original.status, 200);
    await refused(
      'replayed signature',
      await signedApi(app, key, 'GET', '/api/v1/wallet', { timestampMs: ts, signature: original.signature }),
      401,
      'INVALID_SIGNATURE',
    );

    const revoked = await keyOf(alice);
    t.equal((await api(app, 'DELETE', `${KEYS}/${revoked.id}`, { token: alice.accessToken })).status, 200);
    await refused('revoked key', await signedApi(app, revoked, 'GET', '/api/v1/users/me'), 401, 'AUTHENTICATION_REQUIRED');
    const expiring = await keyOf(alice, { expiresAt: new Date(Date.now() + 1_500).toISOString() });
    t.equal((await signedApi(app, expiring, 'GET', '/api/v1/users/me')).status, 200, 'valid until it expires');
    await new Promise((r) => setTimeout(r, 1_600));
    await refused('expired key', await signedApi(app, expiring, 'GET', '/api/v1/users/me'), 401, 'AUTHENTICATION_REQUIRED');
    await refused('unknown key', await signedApi(app, { apiKey: 'ak_nope', secretKey: 'sk_nope' }, 'GET', '/api/v1/users/me'), 401, 'AUTHENTICATION_REQUIRED');

    const bobs = await keyOf(bob);
    await refused(
      "another user's key on an owner-only route",
      await signedApi(app, await keyOf(alice, { scopes: ['keys:write'] }), 'DELETE', `${KEYS}/${bobs.id}`),
      404,
      'API_KEY_NOT_FOUND',
    );
    t.equal((await signedApi(app, bobs, 'GET', '/api/v1/users/me')).status, 200, "bob's key still works");

    const readOnly = await keyOf(alice, { scopes: ['wallet:read'] });
    t.equal((await signedApi(app, readOnly, 'GET', '/api/v1/wallet')).status, 200);
    await refused(
      'scope escalation: a route beyond the key',
      await signedApi(app, readOnly, 'POST', '/api/v1/wallet/sell', { body: { mint: 'SOL', amount: 1 } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    await refused(
      'scope escalation: keys by a key without keys:write',
      await signedApi(app, readOnly, 'POST', KEYS, { body: { name: 'more' } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    await refused(
      'the key without its secret: a route beyond the key answers as any other, so its scopes cannot be probed',
      await signedApi(app, readOnly, 'POST', '/api/v1/wallet/sell', { body: { mint: 'SOL', amount: 1 }, unsigned: true }),
      401,
      'INVALID_SIGNATURE',
    );
    const manager = await keyOf(alice, { scopes: ['keys:write', 'wallet:read'] });
    await refused(
      'scope escalation: a key making a wider key',
      await signedApi(app, manager, 'POST', KEYS, { body: { name: 'wider', scopes: ['wallet:trade'] } }),
      400,
      'VALIDATION_FAILED',
    );
    const narrower = await signedApi(app, manager, 'POST', KEYS, { body: { name: 'narrower', scopes: ['wallet:read'] } });
    t.equal(narrower.status, 201, 'a key may make a key within its own scopes');
    await refused(
      'admin route without the role',
      await signedApi(app, key, 'PUT', '/api/admin/market/prices', { body: { prices: { SOL: 1 } } }),
      403,
      'ADMIN_REQUIRED',
    );
  });

  await t.test('admin routes: the signature is optional unless required; given, it must be right', async (t) => {
    const res = await create(admin, { name: 'ops', scopes: ['admin:write', 'admin:read', 'profile:read'] });
    const key = { apiKey: res.body.data.apiKey, secretKey: res.body.data.secretKey };
    t.equal(
      (await signedApi(app, key, 'PUT', '/api/admin/market/prices', { body: { prices: { SOL: 150 } }, unsigned: true })).status,
      200,
      'unsigned on an admin route',
    );
    t.equal((await signedApi(app, key, 'PUT', '/api/admin/market/prices', { body: { prices: { SOL: 151 } } })).status, 200, 'signed');
    t.equal(
      (await signedApi(app, key, 'PUT', '/api/admin/market/prices', { body: { prices: { SOL: 152 } }, signed: { body: '{}' } })).status,
      401,
      'a wrong signature is refused there too',
    );
    t.equal((await signedApi(app, key, 'GET', '/api/v1/users/me', { unsigned: true })).status, 401, 'elsewhere the signature is required');
    // The spec's point 5: x-timestamp is required when x-signature is given.
    const body = JSON.stringify({ prices: { SOL: 153 } });
    const timestamp = String(Date.now());
    const signature = requestSignature(key.secretKey, { timestamp, method: 'PUT', path: '/api/admin/market/prices', body });
    const put = (headers: Record<string, string>) =>
      fetch(`${app.url}/api/admin/market/prices`, {
        method: 'PUT',
        headers: { 'x-api-key': key.apiKey, 'content-type': 'application/json', ...headers },
        body,
      });
    const noTimestamp = await put({ 'x-signature': signature });
    t.equal(noTimestamp.status, 401, 'a signature without x-timestamp');
    t.equal(((await noTimestamp.json()) as { error: { reason: string } }).error.reason, 'INVALID_SIGNATURE');
    t.equal((await put({ 'x-signature': signature, 'x-timestamp': timestamp })).status, 200, 'the same signature with its timestamp');
  });

  await t.test(
    'public routes need no signature: an unsigned key, or an unknown or revoked one, is answered as anonymous; signed, the key is the caller; protected routes still need the signature',
    async (t) => {
      const erin = await signIn(app, 'erin@example.test');
      const key = await keyOf(erin, { scopes: ['profile:read'] });
      const revoked = await keyOf(erin);
      t.equal((await api(app, 'DELETE', `${KEYS}/${revoked.id}`, { token: erin.accessToken })).status, 200);
      const unknown = { apiKey: 'ak_never-issued', secretKey: 'sk_never-issued' };
      const budget = (res: { headers: Headers }) => res.headers.get('x-ratelimit-remaining');

      for (const [name, credentials] of [
        ['a valid key', key],
        ['a revoked key', revoked],
        ['an unknown key', unknown],
      ] as const) {
        const listing = await signedApi(app, credentials, 'GET', '/api/v1/agents', { unsigned: true });
        t.equal(listing.status, 200, `${name}, unsigned, on a public read`);
        t.equal(budget(listing), null, 'anonymous: a public read is not counted');
        t.equal((await signedApi(app, credentials, 'GET', '/api', { unsigned: true })).status, 200, `${name}, unsigned, on the health route`);
        const write = await signedApi(app, credentials, 'POST', '/api/auth/sign-out', { body: { refreshToken: 'never-issued' }, unsigned: true });
        t.same([write.status, write.body.data], [200, { success: true }], `${name}, unsigned, on a public write`);
        t.equal(write.headers.get('x-ratelimit-limit'), app.deps.config.RATE_LIMIT_ANONYMOUS_PER_MIN.toString(), "counted in the address's anonymous budget");
      }
      for (const [name, credentials] of [
        ['a revoked key', revoked],
        ['an unknown key', unknown],
      ] as const) {
        t.equal((await signedApi(app, credentials, 'GET', '/api/v1/agents')).status, 200, `${name}, signed, on a public route: anonymous`);
        t.equal(
          (await signedApi(app, credentials, 'GET', '/api/v1/users/me')).body.error.reason,
          'AUTHENTICATION_REQUIRED',
          `${name} on a protected route: 401`,
        );
      }

      const signedListing = await signedApi(app, key, 'GET', '/api/v1/agents');
      t.equal(signedListing.status, 200, 'signed on a public route');
      const me = await signedApi(app, key, 'GET', '/api/v1/users/me');
      t.equal(me.status, 200);
      t.equal(Number(budget(me)), Number(budget(signedListing)) - 1, "signed, the public read counted in the key's own budget");
      const forged = await signedApi(app, key, 'GET', '/api/v1/agents', { signed: { path: '/api' } });
      t.same([forged.status, forged.body.error.reason], [401, 'INVALID_SIGNATURE'], 'a signature given on a public route is checked');

      const unsigned = await signedApi(app, key, 'GET', '/api/v1/users/me', { unsigned: true });
      t.same([unsigned.status, unsigned.body.error.reason], [401, 'INVALID_SIGNATURE'], 'a protected route still needs the signature');
      const noKey = await api(app, 'GET', '/api/v1/users/me');
      t.equal(noKey.status, 401);
    },
  );

  await t.test('ADMIN_REQUIRE_SIGNATURE=true makes the signature mandatory on admin routes', async (t) => {
    const strict = await apiWithConfig(app, { ADMIN_REQUIRE_SIGNATURE: true });
    t.teardown(() => strict.close());
    const res = await api(strict, 'POST', KEYS, { token: admin.accessToken, body: { name: 'ops', scopes: ['admin:write'] } });
    const key = { apiKey: res.body.data.apiKey, secretKey: res.body.data.secretKey };
    const unsigned = await signedApi(strict, key, 'PUT', '/api/admin/market/prices', { body: { prices: { SOL: 150 } }, unsigned: true });
    t.equal(unsigned.status, 401);
    t.equal(unsigned.body.error.reason, 'INVALID_SIGNATURE');
    t.equal((await signedApi(strict, key, 'PUT', '/api/admin/market/prices', { body: { prices: { SOL: 150 } } })).status, 200);
  });

  await t.test('at most 10 active keys a user (each has a budget of its own): the 11th is 400 until one is revoked or expires', async (t) => {
    const carol = await signIn(app, 'carol@example.test');
    const made = [];
    for (let i = 0; i < 9; i++) made.push(await keyOf(carol, { name: `bot ${i}` }));
    const expiring = await keyOf(carol, { expiresAt: new Date(Date.now() + 1_500).toISOString() });
    const refusedNow = await create(carol, { name: 'one too many' });
    t.equal(refusedNow.status, 400);
    t.match(refusedNow.body.error, { reason: 'API_KEY_LIMIT_REACHED', maxActiveKeys: 10 });
    t.equal((await api(app, 'DELETE', `${KEYS}/${made[0]!.id}`, { token: carol.accessToken })).status, 200);
    t.equal((await create(carol, { name: 'in its place' })).status, 201, 'a revoked key frees its place');
    t.equal((await create(carol, { name: 'over again' })).status, 400);
    await new Promise((r) => setTimeout(r, 1_600));
    t.ok(expiring.id);
    t.equal((await create(carol, { name: 'after the expiry' })).status, 201, 'an expired key frees its place too');
    t.equal((await create(bob, { name: 'bob is not carol' })).status, 201, 'per user');
  });

  await t.test('15 creations at once by one user: exactly 10 keys, the rest 400 (the count and the creation are one step)', async (t) => {
    const dan = await signIn(app, 'dan@example.test');
    const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => create(dan, { name: `racer ${i}` })));
    const statuses = answers.map((a) => a.status).sort();
    t.same(statuses, [...Array(10).fill(201), ...Array(5).fill(400)]);
    t.ok(answers.filter((a) => a.status === 400).every((a) => a.body.error.reason === 'API_KEY_LIMIT_REACHED'));
    for (const a of answers) if (a.status === 201) reveals.push(a.body.data.apiKey, a.body.data.secretKey);
    const listed = await api(app, 'GET', `${KEYS}?limit=100`, { token: dan.accessToken });
    t.equal(listed.body.data.items.filter((i: { status: string }) => i.status === 'active').length, 10);
  });

  await t.test('DELETE /api/api-keys/{id}: soft revoke, 404 when unknown or revoked already', async (t) => {
    const key = await keyOf(alice);
    const del = await api(app, 'DELETE', `${KEYS}/${key.id}`, { token: alice.accessToken });
    t.equal(del.status, 200);
    t.match(del.body.data, { id: key.id, revokedAt: String });
    t.equal((await api(app, 'DELETE', `${KEYS}/${key.id}`, { token: alice.accessToken })).status, 404, 'revoked already');
    t.equal((await api(app, 'DELETE', `${KEYS}/00000000-0000-4000-8000-000000000000`, { token: alice.accessToken })).status, 404, 'unknown');
    t.equal((await api(app, 'DELETE', `${KEYS}/${key.id}`)).status, 401);
    const listed = (await api(app, 'GET', `${KEYS}?limit=100`, { token: alice.accessToken })).body.data.items.find((i: { id: string }) => i.id === key.id);
    t.match(listed, { status: 'revoked', revokedAt: String }, 'kept in the list, revoked');
    const events = await app.deps.store.readStream(apiKeyStream(key.id));
    t.same(
      events.map((e) => [e.type, e.metadata.actor]),
      [
        ['ApiKeyCreated', alice.userId],
        ['ApiKeyRevoked', alice.userId],
      ],
    );
  });

  await t.test('the OpenAPI document: a security scheme per mode, and every protected route names the modes and the scope it takes', async (t) => {
    const doc = (await api(app, 'GET', '/docs/json')).body;
    const schemes = doc.components.securitySchemes;
    t.same(Object.keys(schemes).sort(), ['apiKey', 'apiSignature', 'apiTimestamp', 'bearerAuth', 'oauth2']);
    t.match(schemes.bearerAuth, { type: 'http', scheme: 'bearer' });
    t.same([schemes.apiKey.name, schemes.apiSignature.name, schemes.apiTimestamp.name], ['x-api-key', 'x-signature', 'x-timestamp']);
    const flow = schemes.oauth2.flows.authorizationCode;
    t.match(flow, { authorizationUrl: /\/oauth\/authorize$/, tokenUrl: /\/oauth\/token$/ });
    t.ok(flow.scopes['wallet:read'], 'the API scopes, described');
    t.notOk(
      Object.keys(flow.scopes).some((s) => s.startsWith('admin:') || s.startsWith('keys:')),
      'none OAuth never grants',
    );
    const signed = { apiKey: [], apiSignature: [], apiTimestamp: [] };
    t.same(doc.paths['/api/v1/wallet'].get.security, [{ bearerAuth: [] }, signed, { oauth2: ['wallet:read'] }], 'all three modes, OAuth with the scope');
    t.same(doc.paths['/api/api-keys'].post.security, [{ bearerAuth: [] }, signed], 'key management: no OAuth');
    t.same(doc.paths['/api/admin/market/prices'].put.security, [{ bearerAuth: [] }, signed], 'admin routes: no OAuth');
    const unsecured = Object.entries(doc.paths as Record<string, Record<string, { security?: unknown }>>)
      .filter(([path]) => path.startsWith('/api/v1/users/me') || path.startsWith('/api/admin/') || path.startsWith('/api/api-keys'))
      .flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => !op.security)
          .map(([method]) => `${method} ${path}`),
      );
    t.same(unsecured, [], 'every route of the user, the administrators and the keys declares its security');
  });

  await t.test('no log line carries a key or a secret', async (t) => {
    const logs = app.logs.join('\n');
    for (const secret of reveals) t.notOk(logs.includes(secret), 'not in the logs');
    const kek = keyEncryptionKeyOf(app.deps.config);
    const hashes = reveals.filter((r) => r.startsWith('ak_')).map((k) => hashApiKey(k, kek));
    t.ok(hashes.length >= 10, `the keys made here are looked at (${hashes.length})`);
    for (const hash of hashes) t.notOk(logs.includes(hash), 'nor its hash');
    t.ok(app.logs.length > 0, 'there are log lines to look at');
  });
});
