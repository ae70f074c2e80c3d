import { createHash, createHmac } from 'node:crypto';
import t from 'tap';
import { randomIds, type Ids } from '../../infra/ids.ts';
import { canonicalRecoveryCode, randomRecoveryCode, recoveryCodeDigest, showRecoveryCode } from '../../infra/recovery-codes.ts';
import { deriveKey } from '../../infra/secrets.ts';

const KEY = 'k'.repeat(32);
const USER = '55555555-5555-5555-8555-555555555555';
const fixed = (base64url: string): Ids => ({ ...randomIds, token: () => base64url });

t.test('a code is 10 Base32 characters from the first 50 of 56 random bits of the ids port', async (t) => {
  t.equal(randomRecoveryCode(fixed(Buffer.alloc(7, 0).toString('base64url'))), 'AAAAAAAAAA');
  t.equal(randomRecoveryCode(fixed(Buffer.alloc(7, 0xff).toString('base64url'))), '7777777777');
  // 0x84 0x21 0x08 0x42 0x10 0x84 0x00: the bits 10000 repeated ten times (the letter Q) then six zero bits
  t.equal(randomRecoveryCode(fixed(Buffer.from([0x84, 0x21, 0x08, 0x42, 0x10, 0x84, 0x00]).toString('base64url'))), 'QQQQQQQQQQ');
  const codes = new Set(Array.from({ length: 200 }, () => randomRecoveryCode(randomIds)));
  t.equal(codes.size, 200, 'random codes differ');
  for (const code of codes) t.match(code, /^[A-Z2-7]{10}$/);
});

t.test('shown lower case as xxxxx-xxxxx; typed in any case, with or without the dash', async (t) => {
  t.equal(showRecoveryCode('ABCDE23456'), 'abcde-23456');
  for (const typed of ['abcde-23456', 'ABCDE-23456', 'abcde23456', ' AbCdE-23456 ']) t.equal(canonicalRecoveryCode(typed), 'ABCDE23456', typed);
  for (const typed of ['abcde-2345', 'abcde--23456', 'abcd-e23456', 'abcde-23451', 'abcde 23456', '', 'abcde-234567'])
    t.equal(canonicalRecoveryCode(typed), null, `not a code: "${typed}"`);
});

t.test('the digest is an HMAC-SHA256 under the HKDF key of its own purpose, bound to the user', async (t) => {
  const d = recoveryCodeDigest(USER, 'ABCDE23456', KEY);
  t.match(d, /^[0-9a-f]{64}$/);
  t.equal(d, createHmac('sha256', deriveKey(KEY, 'mfa-recovery-code')).update(`${USER}\u0000ABCDE23456`).digest('hex'));
  t.not(d, createHmac('sha256', deriveKey(KEY, 'api-key-hash')).update(`${USER}\u0000ABCDE23456`).digest('hex'), 'not another purpose’s key');
  t.not(d, createHash('sha256').update('ABCDE23456').digest('hex'), 'not an unkeyed hash');
  t.not(d, recoveryCodeDigest('66666666-6666-5666-8666-666666666666', 'ABCDE23456', KEY), 'another user, another digest');
  t.not(d, recoveryCodeDigest(USER, 'ABCDE23456', 'j'.repeat(32)), 'another key, another digest');
});
