import t from 'tap';
import { decryptSecret, encryptSecret, generateSecret } from '../../infra/secrets.ts';

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

t.test('generated secrets carry the prefix and 32 random bytes', async (t) => {
  const a = generateSecret('whsec_');
  t.match(a, /^whsec_[A-Za-z0-9_-]{43}$/);
  t.not(a, generateSecret('whsec_'));
});
