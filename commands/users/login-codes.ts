import type { Redis } from 'ioredis';
import { z } from 'zod';
import { refuse } from '../../domain/shared/errors.ts';
import { signupFieldsSchema } from '../../domain/user/events.ts';
import { sameDigest } from '../../domain/user/secret-compare.ts';
import { hmacHex } from '../../infra/tokens.ts';

// Login codes live in Redis only (they are short-lived secrets, not facts): a keyed digest of the
// code, the signup fields of a new user, and the counters that throttle lookups and wrong codes.

export const LOGIN_LIMITS = {
  lookupIntervalMs: 30_000,
  lookupsPerHour: 5,
  maxWrongCodes: 5,
  lockMs: 15 * 60_000,
} as const;

export const pendingSignupSchema = signupFieldsSchema.extend({ username: z.string().optional() });
export type PendingSignup = z.infer<typeof pendingSignupSchema>;

const storedCodeSchema = z.object({ digest: z.string(), signup: pendingSignupSchema.optional() });

/** Redis keys of one user id (derived from the email, so no address appears in a key). */
export function loginKeys(userId: string) {
  return {
    code: `auth:code:${userId}`,
    recent: `auth:lookup-recent:${userId}`,
    hourly: `auth:lookup-hourly:${userId}`,
    failures: `auth:code-failures:${userId}`,
    lock: `auth:lock:${userId}`,
  };
}

const at = (now: Date, ms: number) => new Date(now.getTime() + ms).toISOString();

/** 429 while the account is locked after too many wrong codes. */
export async function assertNotLocked(redis: Redis, userId: string, now: Date): Promise<void> {
  const ttl = await redis.pttl(loginKeys(userId).lock);
  if (ttl > 0) {
    throw refuse('ACCOUNT_LOCKED', 'too many wrong codes: the account is temporarily locked', { nextRequestAt: at(now, ttl) });
  }
}

/** One lookup per interval and a few per hour for an email; 429 with `nextRequestAt` beyond that. */
export async function takeLookupSlot(redis: Redis, userId: string, now: Date): Promise<{ nextRequestAt: string }> {
  const keys = loginKeys(userId);
  const first = await redis.set(keys.recent, '1', 'PX', LOGIN_LIMITS.lookupIntervalMs, 'NX');
  if (first !== 'OK') {
    const ttl = await redis.pttl(keys.recent);
    throw refuse('LOOKUP_THROTTLED', 'a code was sent recently: retry after nextRequestAt', { nextRequestAt: at(now, Math.max(ttl, 0)) });
  }
  const count = await redis.incr(keys.hourly);
  if (count === 1) await redis.pexpire(keys.hourly, 3_600_000);
  if (count > LOGIN_LIMITS.lookupsPerHour) {
    const ttl = await redis.pttl(keys.hourly);
    throw refuse('LOOKUP_THROTTLED', 'too many codes requested: retry after nextRequestAt', { nextRequestAt: at(now, Math.max(ttl, 0)) });
  }
  return { nextRequestAt: at(now, LOGIN_LIMITS.lookupIntervalMs) };
}

const codeDigest = (key: Buffer, userId: string, code: string) => hmacHex(key, `${userId}:${code}`);

/** Stores a new code (replacing any earlier one) for `ttlSeconds`. */
export async function storeCode(
  redis: Redis,
  key: Buffer,
  userId: string,
  code: string,
  ttlSeconds: number,
  signup?: PendingSignup,
): Promise<void> {
  const value = JSON.stringify({ digest: codeDigest(key, userId, code), ...(signup ? { signup } : {}) });
  await redis.set(loginKeys(userId).code, value, 'EX', ttlSeconds);
}

// Deletes the code only if it is still the one that was checked: two verifies of the same code
// cannot both succeed, and a code stored meanwhile is not deleted by mistake.
const TAKE_IF_SAME = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/**
 * Checks and consumes a code. Wrong, expired or already used: 400; the wrong attempt that reaches
 * the limit locks the account (429), as does any attempt while locked.
 */
export async function consumeCode(
  redis: Redis,
  key: Buffer,
  userId: string,
  code: string,
  now: Date,
): Promise<{ signup?: PendingSignup }> {
  await assertNotLocked(redis, userId, now);
  const keys = loginKeys(userId);
  const raw = await redis.get(keys.code);
  const stored = raw ? storedCodeSchema.safeParse(JSON.parse(raw)) : undefined;
  const matches = stored?.success === true && sameDigest(stored.data.digest, codeDigest(key, userId, code));
  if (matches && (await redis.eval(TAKE_IF_SAME, 1, keys.code, raw!)) === 1) {
    await redis.del(keys.failures);
    return { signup: stored.data.signup };
  }
  const failures = await redis.incr(keys.failures);
  if (failures === 1) await redis.pexpire(keys.failures, LOGIN_LIMITS.lockMs);
  if (failures >= LOGIN_LIMITS.maxWrongCodes) {
    await redis.set(keys.lock, '1', 'PX', LOGIN_LIMITS.lockMs);
    await redis.del(keys.failures, keys.code);
    throw refuse('ACCOUNT_LOCKED', 'too many wrong codes: the account is temporarily locked', {
      nextRequestAt: at(now, LOGIN_LIMITS.lockMs),
    });
  }
  throw refuse('INVALID_CODE', 'invalid or expired code');
}
