// A signed statement on the EventStoreDB peer (test/support/esdb-peer), with configured keys being
// rotated: the first of STATEMENT_SIGNING_KEYS signs, the older one stays published; the statement
// verifies against the JWKS and agrees with the ledger route at the same instant.
import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import canonicalize from 'canonicalize';
import { createLocalJWKSet, flattenedVerify, type JSONWebKeySet } from 'jose';
import t from 'tap';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';

const SUBS = '/api/v1/users/me/subscriptions';
const privateJwk = (type: 'ed25519' | 'ec', kid: string) => ({
  ...(type === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519')).privateKey.export({ format: 'jwk' }),
  kid,
});

t.test('statements on EventStoreDB, signed by the first of two configured keys', async (t) => {
  const keys = [privateJwk('ec', 'statements-2026-12'), privateJwk('ed25519', 'statements-2026-06')];
  const app = await startTestApp({ eventStore: 'esdb', config: { ADMIN_EMAILS: 'admin@example.test', STATEMENT_SIGNING_KEYS: JSON.stringify(keys) } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'esdb-statement-dev@example.test');
  const user = await signIn(app, 'esdb-statement-user@example.test');
  const agentId = await followableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    { name: 'On ESDB', venue: 'SPOT_VENUE' },
    { live: true },
  );
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await api(app, method, path, { token: user.accessToken, ...(body ? { body } : {}) });
    t.equal(res.status, 200, res.status === 200 ? `${method} ${path}` : JSON.stringify(res.body));
    return res.body.data;
  };
  await ok('POST', SUBS, { agentId, allocationAmountUsd: 80 });
  await ok('POST', `${SUBS}/${agentId}/allocation/add`, { amountUsd: 20.25 });
  await sleep(5);
  const at = encodeURIComponent(new Date().toISOString());
  await sleep(5);
  await ok('POST', `${SUBS}/${agentId}/allocation/withdraw`, { amountUsd: 10 });

  const jwks = (await api(app, 'GET', '/.well-known/jwks.json')).body as JSONWebKeySet;
  t.same(
    jwks.keys.map((k) => [k.kid, k.alg, k.crv]),
    [
      ['statements-2026-12', 'ES256', 'P-256'],
      ['statements-2026-06', 'EdDSA', 'Ed25519'],
    ],
    'both keys published, the signing one first',
  );
  t.notOk(
    jwks.keys.some((k) => 'd' in k),
    'no private part',
  );

  const signed = await ok('GET', `${SUBS}/${agentId}/statement?at=${at}`);
  t.match(signed.signature, { kid: 'statements-2026-12', alg: 'ES256' });
  const payload = Buffer.from(canonicalize(signed.statement)!, 'utf8').toString('base64url');
  const verified = await flattenedVerify({ protected: signed.signature.protected, signature: signed.signature.signature, payload }, createLocalJWKSet(jwks));
  t.equal(verified.protectedHeader?.kid, 'statements-2026-12');
  const tampered = { ...signed.statement, wallet: { ...signed.statement.wallet, frozen: true } };
  const tamperedPayload = Buffer.from(canonicalize(tampered)!, 'utf8').toString('base64url');
  await t.rejects(
    flattenedVerify({ protected: signed.signature.protected, signature: signed.signature.signature, payload: tamperedPayload }, createLocalJWKSet(jwks)),
    'a changed statement is refused',
  );

  const [pool] = signed.statement.pools;
  t.match(pool.subscription, { allocatedUsd: 100.25 }, 'before the withdrawal');
  t.match(signed.statement.globalPosition, { commit: String, prepare: String });
  const ledger = await ok('GET', `${SUBS}/${agentId}/ledger?at=${at}&limit=100`);
  t.same(pool.subscription, ledger.subscription, "the ledger route's record at the same instant");
  t.same(pool.ledger, ledger.items);
  const later = await ok('GET', `${SUBS}/${agentId}/statement`);
  t.equal(later.statement.pools[0].subscription.allocatedUsd, 90.25, 'now, after the withdrawal');
});
