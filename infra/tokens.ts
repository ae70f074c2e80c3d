import { createHash, createHmac } from 'node:crypto';
import type { Ids } from './ids.ts';
import { deriveKey } from './secrets.ts';

// Secrets the auth flow hands out and how they are kept: only digests are ever stored.

export const sha256Hex = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** HMAC-SHA256 hex under a key from `deriveKey` (infra/secrets.ts). */
export const hmacHex = (key: Buffer, value: string) => createHmac('sha256', key).update(value, 'utf8').digest('hex');

/**
 * A client address as Redis keys hold it (throttles, rate budgets): a keyed digest, never the
 * address itself, the same for every use so they can be told apart only by their prefixes.
 */
export const clientAddressDigest = (masterSecret: string, address: string) => hmacHex(deriveKey(masterSecret, 'client-address'), address);

/**
 * A refresh token: `<userId>.<32 random bytes, base64url>`. The user-id part only locates the
 * user's stream (so no read model is consulted to decide a refresh); the random part is the secret.
 */
export function newRefreshToken(userId: string, ids: Ids): string {
  return `${userId}.${ids.token(32)}`;
}

const REFRESH_TOKEN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.[A-Za-z0-9_-]{43}$/;

/** The user id a refresh token names, or undefined when it is not shaped like one of ours. */
export function refreshTokenUserId(token: string): string | undefined {
  return REFRESH_TOKEN.exec(token)?.[1];
}

/**
 * The user id of an email: a UUID (version 5 layout) from the sha256 of the normalised email, so
 * registering the same email twice targets the same stream and `no_stream` refuses the second.
 */
export function userIdForEmail(normalizedEmail: string): string {
  const bytes = createHash('sha256').update(`user-email:${normalizedEmail}`, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
