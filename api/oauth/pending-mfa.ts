// The consent page's second factor: when the emailed code signs in a user with MFA on, the
// mfaAccessToken VerifyCode issued is kept here under the interaction's id, sealed (AES-256-GCM,
// its own HKDF purpose), for the token's own lifetime. The page never carries it: the TOTP form
// posts only the code, and the provider's interaction cookie binds the browser to the id.
import type { Redis } from 'ioredis';
import { decryptSecret, encryptSecret } from '../../infra/secrets.ts';

const PURPOSE = 'oauth-consent-mfa-token';
const keyOf = (uid: string) => `oauth:consent-mfa:${uid}`;

export interface PendingMfa {
  hold(uid: string, mfaAccessToken: string, ttlSeconds: number): Promise<void>;
  /** The held token, or null when none is held (never one, expired, or the seal no longer opens). */
  held(uid: string): Promise<string | null>;
  drop(uid: string): Promise<void>;
}

export function pendingMfa(redis: Redis, masterSecret: string): PendingMfa {
  return {
    async hold(uid, mfaAccessToken, ttlSeconds) {
      await redis.set(keyOf(uid), encryptSecret(mfaAccessToken, masterSecret, PURPOSE), 'EX', ttlSeconds);
    },
    async held(uid) {
      const sealed = await redis.get(keyOf(uid));
      if (sealed === null) return null;
      try {
        return decryptSecret(sealed, masterSecret, PURPOSE);
      } catch {
        return null; // sealed under a master secret since rotated: the user signs in again
      }
    },
    async drop(uid) {
      await redis.del(keyOf(uid));
    },
  };
}
