import type { Redis } from 'ioredis';
import { z } from 'zod';
import { accountLocked, addressLocked, invalidCode, LOGIN_LIMITS, lookupThrottled, nextLookupAt } from '../../domain/user/attempt-limits.ts';
import { signupFieldsSchema } from '../../domain/user/events.ts';
import { sameDigest } from '../../domain/user/secret-compare.ts';
import { countInWindow, scriptCommand } from '../../infra/redis.ts';
import { hmacHex } from '../../infra/tokens.ts';

// Login codes live in Redis only (they are short-lived secrets, not facts): a keyed digest of the
// code, the signup fields of a new user, and the counters that throttle lookups and wrong codes,
// applying the limits of domain/user/attempt-limits.ts.

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
    /** the wrong codes for this email from one client address (its keyed digest, clientAddressDigest) */
    failuresFrom: (addressDigest: string) => `auth:code-failures:${userId}:${addressDigest}`,
  };
}

/** ACCOUNT_LOCKED while the account is locked after too many wrong codes. */
export async function assertNotLocked(redis: Redis, userId: string, now: Date): Promise<void> {
  const ttl = await redis.pttl(loginKeys(userId).lock);
  if (ttl > 0) {
    throw accountLocked(now, ttl);
  }
}

/** One lookup per interval and a few per hour for an email; LOOKUP_THROTTLED with `nextRequestAt` beyond that. */
export async function takeLookupSlot(redis: Redis, userId: string, now: Date): Promise<{ nextRequestAt: string }> {
  const keys = loginKeys(userId);
  const first = await redis.set(keys.recent, '1', 'PX', LOGIN_LIMITS.lookupIntervalMs, 'NX');
  if (first !== 'OK') {
    const ttl = await redis.pttl(keys.recent);
    throw lookupThrottled('recent', now, ttl);
  }
  const count = await countInWindow(redis, keys.hourly, LOGIN_LIMITS.lookupWindowMs);
  if (count > LOGIN_LIMITS.lookupsPerHour) {
    const ttl = await redis.pttl(keys.hourly);
    throw lookupThrottled('hourly', now, ttl);
  }
  return { nextRequestAt: nextLookupAt(now) };
}

const codeDigest = (key: Buffer, userId: string, code: string) => hmacHex(key, `${userId}:${code}`);

/** Stores a new code (replacing any earlier one) for `ttlSeconds`. */
export async function storeCode(redis: Redis, key: Buffer, userId: string, code: string, ttlSeconds: number, signup?: PendingSignup): Promise<void> {
  const value = JSON.stringify({ digest: codeDigest(key, userId, code), ...(signup ? { signup } : {}) });
  await redis.set(loginKeys(userId).code, value, 'EX', ttlSeconds);
}

// Both scripts run atomically in Redis, so concurrent verifies of one email are counted one by
// one: from one address exactly `wrongCodesPerAddress` - 1 wrong codes are refused INVALID_CODE, from all
// addresses together at most `wrongCodesPerEmail` - 1, and no right code is consumed once either
// limit is reached, however many requests arrive at once.

// A wrong attempt: refused while the email is locked, or this address is, for it (nothing counted);
// not counted either while no code waits (none sent, expired or used: nothing can be guessed, and
// counting would let anyone lock any account without a code ever being sent); otherwise counted for
// the email and for the address. The attempt that reaches the email's limit locks the email and
// deletes its code; the one that reaches the address's limit refuses that address for lockMs (the
// code stays for its owner). Answers {'locked', ms left}, {'address', ms left} or {'wrong', count}.
// KEYS: failures, lock, code, failures from this address. ARGV: wrongCodesPerEmail, lockMs, wrongCodesPerAddress.
const COUNT_WRONG = `
local locked = redis.call('PTTL', KEYS[2])
if locked > 0 then return {'locked', locked} end
if tonumber(redis.call('GET', KEYS[4]) or '0') >= tonumber(ARGV[3]) then return {'address', redis.call('PTTL', KEYS[4])} end
if redis.call('EXISTS', KEYS[3]) == 0 then return {'wrong', 0} end
local mine = redis.call('INCR', KEYS[4])
if mine == 1 or mine >= tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[4], ARGV[2]) end
local failures = redis.call('INCR', KEYS[1])
if failures == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if failures >= tonumber(ARGV[1]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
  redis.call('DEL', KEYS[1], KEYS[3])
  return {'locked', tonumber(ARGV[2])}
end
if mine >= tonumber(ARGV[3]) then return {'address', tonumber(ARGV[2])} end
return {'wrong', failures}`;

// A matching code: consumed only if it is still the one that was checked (two verifies of one code
// cannot both succeed, and a code stored meanwhile is not deleted by mistake), and only while
// neither the email nor this address (for it) has reached its limit of wrong codes: a refused
// address learns nothing from trying more codes. Answers {'taken'}, {'locked', ms left},
// {'address', ms left} or {'gone'} (consumed or replaced meanwhile).
// KEYS: code, failures, lock, failures from this address. ARGV: the stored value that was checked,
// wrongCodesPerEmail, lockMs, wrongCodesPerAddress.
const TAKE_IF_SAME = `
local locked = redis.call('PTTL', KEYS[3])
if locked > 0 then return {'locked', locked} end
if tonumber(redis.call('GET', KEYS[2]) or '0') >= tonumber(ARGV[2]) then return {'locked', tonumber(ARGV[3])} end
if tonumber(redis.call('GET', KEYS[4]) or '0') >= tonumber(ARGV[4]) then return {'address', redis.call('PTTL', KEYS[4])} end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {'gone'} end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[4])
return {'taken'}`;

type ScriptAnswer = ['taken'] | ['gone'] | ['locked', number] | ['address', number] | ['wrong', number];

/**
 * Checks and consumes a code sent from the client address whose keyed digest is `addressDigest`.
 * Wrong, expired or already used: INVALID_CODE; the wrong attempt that reaches the address's limit refuses
 * that address for this email (ADDRESS_LOCKED), the one that reaches the email's limit locks
 * the account (ACCOUNT_LOCKED), as does any later attempt.
 */
export async function consumeCode(
  redis: Redis,
  key: Buffer,
  attempt: { userId: string; code: string; addressDigest: string },
  now: Date,
): Promise<{ signup?: PendingSignup }> {
  const { userId, code } = attempt;
  const keys = loginKeys(userId);
  const mine = keys.failuresFrom(attempt.addressDigest);
  const { wrongCodesPerEmail, wrongCodesPerAddress, lockMs } = LOGIN_LIMITS;
  const raw = await redis.get(keys.code);
  const stored = raw ? storedCodeSchema.safeParse(JSON.parse(raw)) : undefined;
  if (stored?.success === true && sameDigest(stored.data.digest, codeDigest(key, userId, code))) {
    const [taken, ms] = (await scriptCommand(redis, 'takeIfSame', TAKE_IF_SAME, 4)(
      keys.code,
      keys.failures,
      keys.lock,
      mine,
      raw!,
      wrongCodesPerEmail,
      lockMs,
      wrongCodesPerAddress,
    )) as ScriptAnswer;
    if (taken === 'taken') return { signup: stored.data.signup };
    if (taken === 'locked') throw accountLocked(now, ms);
    if (taken === 'address') throw addressLocked(now, ms);
  }
  const [outcome, ms] = (await scriptCommand(redis, 'countWrong', COUNT_WRONG, 4)(
    keys.failures,
    keys.lock,
    keys.code,
    mine,
    wrongCodesPerEmail,
    lockMs,
    wrongCodesPerAddress,
  )) as ScriptAnswer;
  if (outcome === 'locked') throw accountLocked(now, ms);
  if (outcome === 'address') throw addressLocked(now, ms);
  throw invalidCode();
}

/**
 * One more lookup from this client address (its keyed digest in the key, never the address): past
 * `perHour` in the hour, LOOKUP_THROTTLED before anything about the email is looked at, so registered emails
 * cannot be enumerated through `isNewUser` by changing the email on every try.
 */
export async function takeAddressSlot(redis: Redis, addressDigest: string, perHour: number, now: Date): Promise<void> {
  const key = `auth:lookup-address:${addressDigest}`;
  const count = await countInWindow(redis, key, LOGIN_LIMITS.lookupWindowMs);
  if (count > perHour) {
    const ttl = await redis.pttl(key);
    throw lookupThrottled('address', now, ttl);
  }
}
