// MFA recovery codes: 10 Base32 characters (RFC 4648 alphabet, 50 random bits from the ids port),
// shown once as `xxxxx-xxxxx` and accepted in any case, with or without the dash. Only a keyed
// digest is ever recorded: HMAC-SHA256 under an HKDF key of its own purpose, bound to the user, so a
// leaked event store cannot be searched for codes offline (50 bits would not withstand that unkeyed).
import { createHmac } from 'node:crypto';
import type { Ids } from './ids.ts';
import { deriveKey } from './secrets.ts';

const PURPOSE = 'mfa-recovery-code';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const LENGTH = 10;
const CANONICAL = /^[A-Z2-7]{10}$/;

/** A new code in its canonical form (upper case, no dash): 7 random bytes, of which the first 50 bits are used. */
export function randomRecoveryCode(ids: Ids): string {
  let bits = 0n;
  for (const byte of Buffer.from(ids.token(7), 'base64url')) bits = (bits << 8n) | BigInt(byte);
  bits >>= 6n;
  let code = '';
  for (let i = 0; i < LENGTH; i++) code = ALPHABET[Number((bits >> BigInt(5 * i)) & 31n)] + code;
  return code;
}

/** How a code is shown to the user: lower case, split in two halves by a dash. */
export const showRecoveryCode = (canonical: string): string => `${canonical.slice(0, 5)}-${canonical.slice(5)}`.toLowerCase();

/** The canonical form of a code as typed (any case, one dash or none, spaces around); null when it cannot be a code. */
export function canonicalRecoveryCode(input: string): string | null {
  const code = input.trim().toUpperCase();
  const joined = code.length === LENGTH + 1 && code[5] === '-' ? code.slice(0, 5) + code.slice(6) : code;
  return CANONICAL.test(joined) ? joined : null;
}

/** HMAC-SHA256 (hex) of the user's canonical code, under the key of purpose `mfa-recovery-code` derived from `keyMaterial`. */
export const recoveryCodeDigest = (userId: string, canonical: string, keyMaterial: string): string =>
  createHmac('sha256', deriveKey(keyMaterial, PURPOSE)).update(`${userId}\u0000${canonical}`).digest('hex');
