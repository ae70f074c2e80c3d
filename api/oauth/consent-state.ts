// What the consent page keeps per interaction (its id, bound to the browser by the provider's
// cookie), in Redis for as long as the step it serves:
// - the email a captcha-checked lookup of this interaction sent a code to, and the code tries
//   taken for it: the code form takes only that email, a few tries a lookup, so the page cannot be
//   used to spend an account's wrong-code budget (and lock it) without solving a captcha;
// - the mfaAccessToken VerifyCode issued to a user with MFA on, sealed (AES-256-GCM, its own HKDF
//   purpose), so the TOTP form posts only the code and the page never carries the token.
import type { Redis } from 'ioredis';
import { scriptCommand } from '../../infra/redis.ts';
import { normalizeEmail } from '../../domain/user/fields.ts';
import { decryptSecret, encryptSecret } from '../../infra/secrets.ts';

/** Code tries per lookup on the consent page; then a new lookup (with its captcha) is needed. */
const CODE_TRIES_PER_LOOKUP = 3;

const MFA_PURPOSE = 'oauth-consent-mfa-token';
const signInKey = (uid: string) => `oauth:consent-sign-in:${uid}`;
const mfaKey = (uid: string) => `oauth:consent-mfa:${uid}`;

// KEYS: the sign-in hash. ARGV: the email, the tries allowed. 1 when a try is taken, else 0.
const TAKE_CODE_TRY = `
if redis.call('HGET', KEYS[1], 'email') ~= ARGV[1] then return 0 end
if redis.call('HINCRBY', KEYS[1], 'tries', 1) > tonumber(ARGV[2]) then return 0 end
return 1`;

export interface ConsentState {
  /** A lookup of this interaction emailed a code to `email`: its code tries start afresh. */
  lookedUp(uid: string, email: string, ttlSeconds: number): Promise<void>;
  /** One code try for `email`: false when it is not the email this interaction looked up, or its tries are spent. */
  takeCodeTry(uid: string, email: string): Promise<boolean>;
  holdMfa(uid: string, mfaAccessToken: string, ttlSeconds: number): Promise<void>;
  /** The held mfaAccessToken, or null when none is held (never one, expired, or the seal no longer opens). */
  heldMfa(uid: string): Promise<string | null>;
  /** The sign-in is over (done, or back to the email step): nothing of it is kept. */
  clear(uid: string): Promise<void>;
}

export function consentState(redis: Redis, masterSecret: string): ConsentState {
  return {
    async lookedUp(uid, email, ttlSeconds) {
      await redis.multi().del(signInKey(uid)).hset(signInKey(uid), 'email', normalizeEmail(email), 'tries', 0).expire(signInKey(uid), ttlSeconds).exec();
    },
    async takeCodeTry(uid, email) {
      return (await scriptCommand(redis, 'takeCodeTry', TAKE_CODE_TRY, 1)(signInKey(uid), normalizeEmail(email), CODE_TRIES_PER_LOOKUP)) === 1;
    },
    async holdMfa(uid, mfaAccessToken, ttlSeconds) {
      await redis.set(mfaKey(uid), encryptSecret(mfaAccessToken, masterSecret, MFA_PURPOSE), 'EX', ttlSeconds);
    },
    async heldMfa(uid) {
      const sealed = await redis.get(mfaKey(uid));
      if (sealed === null) return null;
      try {
        return decryptSecret(sealed, masterSecret, MFA_PURPOSE);
      } catch {
        return null; // sealed under a master secret since rotated: the user signs in again
      }
    },
    async clear(uid) {
      await redis.del(signInKey(uid), mfaKey(uid));
    },
  };
}
