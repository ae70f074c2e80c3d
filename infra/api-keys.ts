// API key material: the key (what a client sends in x-api-key, looked up by its keyed hash) and its
// signing secret (sealed at rest, opened to check a request's x-signature). Both are random,
// shown once at creation, never stored or logged in the clear.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from './config.ts';
import type { Ids } from './ids.ts';
import { decryptSecret, deriveKey, encryptSecret } from './secrets.ts';

const SECRET_PURPOSE = 'api-key-signing-secret';
const HASH_PURPOSE = 'api-key-hash';

/** The key that seals signing secrets and keys the hashes: KEY_ENCRYPTION_KEY, else (development only) JWT_SECRET. */
export const keyEncryptionKeyOf = (config: Pick<Config, 'KEY_ENCRYPTION_KEY' | 'JWT_SECRET'>): string => config.KEY_ENCRYPTION_KEY ?? config.JWT_SECRET;

export interface KeyMaterial {
  apiKey: string;
  secretKey: string;
  /** the key's first characters, safe to show in lists */
  prefix: string;
}

export function newKeyMaterial(ids: Ids): KeyMaterial {
  const apiKey = `ak_${ids.token(32)}`;
  return { apiKey, secretKey: `sk_${ids.token(32)}`, prefix: apiKey.slice(0, 10) };
}

/** HMAC-SHA256 of the key under a key derived for this purpose: a leaked table cannot be tried offline without it. */
export const hashApiKey = (apiKey: string, keyEncryptionKey: string): string =>
  createHmac('sha256', deriveKey(keyEncryptionKey, HASH_PURPOSE)).update(apiKey).digest('hex');

export const sealSigningSecret = (secret: string, keyEncryptionKey: string): string => encryptSecret(secret, keyEncryptionKey, SECRET_PURPOSE);
export const openSigningSecret = (sealed: string, keyEncryptionKey: string): string => decryptSecret(sealed, keyEncryptionKey, SECRET_PURPOSE);

/** The spec's signature: lowercase hex HMAC-SHA256 keyed with the secret over timestamp + METHOD + path (with its query as sent) + body. */
export function requestSignature(secret: string, request: { timestamp: string; method: string; path: string; body: string }): string {
  return createHmac('sha256', secret).update(`${request.timestamp}${request.method.toUpperCase()}${request.path}${request.body}`).digest('hex');
}

/** Compares a given signature with the expected one in constant time (a malformed one is simply wrong). */
export function signatureMatches(given: string, expected: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(expected, 'hex'));
}
