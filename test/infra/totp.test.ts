import { generateSync } from 'otplib';
import t from 'tap';
import { matchTotp, TOTP_SETTINGS, totpSecretOf, totpUri } from '../../infra/totp.ts';

// RFC 6238 appendix B, SHA-1: the seed is the ASCII string "12345678901234567890".
const seed = totpSecretOf(Buffer.from('12345678901234567890', 'ascii'));
const vectors: Array<[number, string]> = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

t.test('the RFC 6238 test vectors, with the settings the service uses', async (t) => {
  t.same(TOTP_SETTINGS, { algorithm: 'sha1', digits: 6, period: 30 });
  for (const [seconds, expected] of vectors) {
    t.equal(generateSync({ secret: seed, ...TOTP_SETTINGS, digits: 8, epoch: seconds }), expected, `8 digits at T=${seconds}`);
    // 6 digits are the same truncation modulo 10^6: the last six of the RFC's eight.
    const code = expected.slice(2);
    t.equal(generateSync({ secret: seed, ...TOTP_SETTINGS, epoch: seconds }), code, `6 digits at T=${seconds}`);
    t.same(matchTotp(seed, code, new Date(seconds * 1000)), { timeStep: Math.floor(seconds / 30) }, `accepted at T=${seconds}`);
  }
});

t.test('a code is accepted one step either side of the clock, not two', async (t) => {
  const code = '287082'; // T=59: step 1
  t.same(matchTotp(seed, code, new Date(89_000)), { timeStep: 1 }, 'one step later');
  t.same(matchTotp(seed, code, new Date(0)), { timeStep: 1 }, 'one step earlier');
  t.equal(matchTotp(seed, code, new Date(90_000)), null, 'two steps later');
  t.equal(matchTotp(seed, '28708', new Date(59_000)), null, 'five digits');
  t.equal(matchTotp(seed, '28708a', new Date(59_000)), null, 'not digits');
});

t.test('the otpauth URI an authenticator app scans', async (t) => {
  const uri = new URL(totpUri(seed, 'Agent Trading', 'ann@example.com'));
  t.equal(uri.protocol, 'otpauth:');
  t.equal(uri.host, 'totp');
  t.equal(decodeURIComponent(uri.pathname), '/Agent Trading:ann@example.com');
  t.equal(uri.searchParams.get('secret'), seed);
  t.equal(uri.searchParams.get('issuer'), 'Agent Trading');
  t.equal(totpSecretOf(new Uint8Array(20)).length, 32, '20 bytes are 32 Base32 characters, no padding');
});
