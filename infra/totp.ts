// TOTP (RFC 6238) through otplib, in the one configuration every authenticator app reads: SHA-1,
// 6 digits, 30-second steps, a 20-byte secret shown in Base32. Nothing here keeps state: replay
// protection is the caller's (the user aggregate keeps the last time step used).
import { generateURI, ScureBase32Plugin, verifySync } from 'otplib';

export const TOTP_SETTINGS = { algorithm: 'sha1', digits: 6, period: 30 } as const;

/** A code of the step before or after the server's is accepted too (clock drift, typing time). */
const TOLERANCE_SECONDS = TOTP_SETTINGS.period;
export const TOTP_SECRET_BYTES = 20;
const base32 = new ScureBase32Plugin();

/** The Base32 secret of `bytes` random bytes (from the ids port). */
export function totpSecretOf(bytes: Uint8Array): string {
  return base32.encode(bytes, { padding: false });
}

/** The `otpauth://totp/…` URI an authenticator app scans. */
export function totpUri(secret: string, issuer: string, label: string): string {
  return generateURI({ issuer, label, secret, ...TOTP_SETTINGS });
}

/** The RFC 6238 time step a code matches at `now` (within one step either way), or null. */
export function matchTotp(secret: string, code: string, now: Date): { timeStep: number } | null {
  if (!/^\d{6}$/.test(code)) return null;
  const result = verifySync({
    secret,
    token: code,
    ...TOTP_SETTINGS,
    epoch: Math.floor(now.getTime() / 1000),
    epochTolerance: TOLERANCE_SECONDS,
  });
  return result.valid && 'timeStep' in result ? { timeStep: result.timeStep } : null;
}
