import t from 'tap';
import { randomIds } from '../../infra/ids.ts';
import { AGENT_SIGNING_SECRET, decryptSecret, deriveKey, encryptSecret } from '../../infra/secrets.ts';

const master = 'a-master-secret-of-at-least-32-characters!';

t.test('a sealed secret opens with the same master secret and purpose', async (t) => {
  const sealed = encryptSecret('whsec_abc', master, 'p1');
  t.notMatch(sealed, /whsec_abc/, 'the ciphertext does not show the plaintext');
  t.equal(decryptSecret(sealed, master, 'p1'), 'whsec_abc');
  t.not(encryptSecret('whsec_abc', master, 'p1'), sealed, 'each sealing uses a fresh nonce');
});

t.test('a sealed secret does not open under another master secret or purpose', async (t) => {
  const sealed = encryptSecret('whsec_abc', master, 'p1');
  t.throws(() => decryptSecret(sealed, `${master}x`, 'p1'));
  t.throws(() => decryptSecret(sealed, master, 'p2'));
});

t.test('an altered ciphertext is refused', async (t) => {
  const [v, iv, tag, body] = encryptSecret('whsec_abc', master, 'p1').split('.') as [string, string, string, string];
  const flipped = Buffer.from(body, 'base64url');
  flipped[0] = flipped[0]! ^ 1;
  t.throws(() => decryptSecret([v, iv, tag, flipped.toString('base64url')].join('.'), master, 'p1'));
});

t.test('the ids port: 32 random bytes as base64url, uniform digits of the asked length, uuids', async (t) => {
  const a = randomIds.token(32);
  t.match(a, /^[A-Za-z0-9_-]{43}$/);
  t.not(a, randomIds.token(32));
  t.match(randomIds.digits(6), /^\d{6}$/);
  t.match(randomIds.uuid(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

t.test('key derivation is stable: secrets sealed by earlier releases still open', async (t) => {
  // Values produced before derivation was shared with the login-code and mail-job keys: a change to
  // the derivation would make every stored signing secret unreadable.
  t.equal(deriveKey(master, AGENT_SIGNING_SECRET).toString('hex'), 'ec11334a8ebd96b9b7331ffaafa3712d34aacb6ed3ed12897cbf52c73930cf8e');
  const sealedEarlier = 'v1.OYH02PzzPJkivvE1.sGAR3mVaEOKoo1pMnZKTig.dpoQV5Lyh0Qq3YL5jusWKg8QdYD3esX0bvePA-pK';
  t.equal(decryptSecret(sealedEarlier, master, AGENT_SIGNING_SECRET), 'whsec_sealed-before-the-change');
});

t.test('each purpose derives its own key', async (t) => {
  const keys = ['login-code', 'mail-job-id', AGENT_SIGNING_SECRET].map((p) => deriveKey(master, p).toString('hex'));
  t.equal(new Set(keys).size, 3);
  t.not(deriveKey(`${master}x`, 'login-code').toString('hex'), keys[0], 'another master secret, another key');
});
