import { createHash, createHmac } from 'node:crypto';
import { isIPv6 } from 'node:net';
import type { Ids } from './ids.ts';
import { deriveKey } from './secrets.ts';

// Secrets the auth flow hands out and how they are kept: only digests are ever stored.

export const sha256Hex = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** HMAC-SHA256 hex under a key from `deriveKey` (infra/secrets.ts). */
export const hmacHex = (key: Buffer, value: string) => createHmac('sha256', key).update(value, 'utf8').digest('hex');

/**
 * A client address as Redis keys hold it (throttles, rate budgets): a keyed digest, never the
 * address itself, the same for every use so they can be told apart only by their prefixes. An
 * IPv6 address counts as its /64 network (one subscriber is usually given a whole /64, so its
 * addresses are one client's); an IPv4-mapped IPv6 address as the IPv4 address.
 */
export const clientAddressDigest = (masterSecret: string, address: string) => hmacHex(deriveKey(masterSecret, 'client-address'), clientNetwork(address));

/** `address`, or for IPv6 its /64 network (`2001:db8:0:1::/64`). */
function clientNetwork(address: string): string {
  const bare = address.split('%')[0]!;
  if (!isIPv6(bare)) return address;
  const words = ipv6Words(bare);
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    return [words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff].join('.');
  }
  return `${words
    .slice(0, 4)
    .map((w) => w.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit words of a valid IPv6 address (`::` expanded, an IPv4 tail as two words). */
function ipv6Words(address: string): number[] {
  const wordsOf = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((w) => {
          if (!w.includes('.')) return [parseInt(w, 16)];
          const [a, b, c, d] = w.split('.').map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head, tail] = address.split('::') as [string, string | undefined];
  const first = wordsOf(head);
  const last = tail === undefined ? [] : wordsOf(tail);
  return [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
}

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
