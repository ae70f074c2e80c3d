// The statements' keys (infra/statement-keys.ts): configured private JWKs checked when the
// configuration loads, the development key derived from JWT_SECRET (the same in every process), the
// JWKS holding public halves only, and signatures that verify under the published keys alone.
import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { loadConfig } from '../../infra/config.ts';
import { startRuntime } from '../../runtime.ts';
import { signStatement, statementDigest, statementKeys, verifyStatement } from '../../infra/statement-keys.ts';

const ed25519 = (kid: string) => ({ ...generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }), kid });

t.test('STATEMENT_SIGNING_KEYS: a JSON array of private JWKs with their own kids', async (t) => {
  const bad = (value: string) =>
    t.throws(
      () => loadConfig({ STATEMENT_SIGNING_KEYS: value }),
      { name: 'ConfigError', message: /^configuration: STATEMENT_SIGNING_KEYS/ },
      value.slice(0, 40),
    );
  bad('not json');
  bad('[]');
  bad(JSON.stringify([{ ...ed25519('a'), d: undefined }]));
  bad(JSON.stringify([ed25519('same'), ed25519('same')]));
  bad(JSON.stringify([{ kty: 'RSA', kid: 'r', n: 'x', e: 'AQAB', d: 'y' }]));
  t.equal(loadConfig({ STATEMENT_SIGNING_KEYS: '' }).STATEMENT_SIGNING_KEYS, undefined, 'empty is unset');
});

t.test('the development key is derived from JWT_SECRET: every process signs with the same key', async (t) => {
  const [one, two] = [loadConfig({}), loadConfig({})];
  t.not(one, two);
  t.same(statementKeys(one).jwks, statementKeys(two).jwks);
  const other = statementKeys(loadConfig({ JWT_SECRET: 'another-development-secret-of-32-characters' }));
  t.not(other.jwks.keys[0]!.x, statementKeys(one).jwks.keys[0]!.x, 'another secret, another key');
});

t.test('signatures verify under the published keys, the signing one first; the JWKS has no private part', async (t) => {
  const config = loadConfig({ STATEMENT_SIGNING_KEYS: JSON.stringify([ed25519('new'), ed25519('old')]) });
  const keys = statementKeys(config);
  t.same(
    keys.jwks.keys.map((k) => k.kid),
    ['new', 'old'],
  );
  t.notOk(JSON.stringify(keys.jwks).includes('"d"'), 'public halves only');
  const statement = { figure: 1.5, name: 'Zoë', nested: { b: 2, a: 1 } };
  const signature = await signStatement(keys, statement);
  t.equal(signature.kid, 'new');
  t.equal(signature.digest, statementDigest({ nested: { a: 1, b: 2 }, name: 'Zoë', figure: 1.5 }), 'the digest does not depend on key order');
  t.ok(await verifyStatement(keys.jwks, statement, signature));
  t.notOk(await verifyStatement(keys.jwks, { ...statement, figure: 1.6 }, signature), 'a changed figure');
  const rotatedOut = statementKeys(loadConfig({ STATEMENT_SIGNING_KEYS: JSON.stringify([ed25519('newer')]) }));
  t.notOk(await verifyStatement(rotatedOut.jwks, statement, signature), 'a key no longer published verifies nothing');
});

t.test('a key of the right shape that cannot sign stops the start, naming the setting and not the key', async (t) => {
  const key = { ...ed25519('broken'), d: 'AAAA' };
  const config = loadConfig({ STATEMENT_SIGNING_KEYS: JSON.stringify([key]) });
  await t.rejects(startRuntime({ config, roles: { api: true, projections: false, workers: false } }), {
    name: 'ConfigError',
    message: 'configuration: STATEMENT_SIGNING_KEYS holds a key that cannot be used to sign',
  });
});
