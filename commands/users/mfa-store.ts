import type { Redis } from 'ioredis';
import { scriptCommand } from '../../infra/redis.ts';
import { z } from 'zod';
import { refuse, type DomainError } from '../../domain/shared/errors.ts';
import { MFA_LIMITS, mfaLocked, wrongCodeLocks } from '../../domain/user/attempt-limits.ts';
import { sha256Hex } from '../../infra/tokens.ts';

// What MFA keeps in Redis, as login codes do (short-lived, not facts): an enrolment waiting for its
// first code (its secret sealed), the mfaAccessTokens (only their digests), and the attempt budget
// of second-factor codes per user (TOTP and recovery codes alike: both are guesses at one account),
// applying the limits of domain/user/attempt-limits.ts.

export function mfaKeys(userId: string) {
  return {
    enrolment: `auth:mfa-enrolment:${userId}`,
    attempts: `auth:mfa-attempts:${userId}`,
    lock: `auth:mfa-lock:${userId}`,
  };
}

const tokenKey = (token: string) => `auth:mfa-token:${sha256Hex(token)}`;
const MFA_TOKEN = /^mfa_[A-Za-z0-9_-]{43}$/;
const storedToken = z.object({ userId: z.string() });

/** An mfaAccessToken for `userId`: `mfa_` + 32 random bytes; Redis keeps its digest for `ttlSeconds`. */
export async function issueMfaToken(redis: Redis, userId: string, token: string, ttlSeconds: number): Promise<void> {
  await redis.set(tokenKey(token), JSON.stringify({ userId }), 'EX', ttlSeconds);
}

/** The user an mfaAccessToken was issued to; INVALID_MFA_TOKEN when it is unknown, expired or spent. */
export async function mfaTokenUser(redis: Redis, token: string): Promise<string> {
  const raw = MFA_TOKEN.test(token) ? await redis.get(tokenKey(token)) : null;
  const parsed = raw ? storedToken.safeParse(JSON.parse(raw)) : undefined;
  if (!parsed?.success) throw refuse('INVALID_MFA_TOKEN', 'invalid or expired mfaAccessToken: sign in again');
  return parsed.data.userId;
}

/** Spends the token: only one of several requests completing with it gets true. */
export async function spendMfaToken(redis: Redis, token: string): Promise<boolean> {
  return (await redis.del(tokenKey(token))) === 1;
}

// One attempt is taken from the user's budget before a code is checked, atomically: however many
// requests arrive at once, at most `maxAttempts` codes are checked per window. The attempt that
// reaches the limit locks (when its code is wrong); a right code gives the budget back.
// KEYS: attempts, lock. ARGV: maxAttempts, lockMs. Answers {'ok', attempt} or {'locked', ms left}.
const TAKE_ATTEMPT = `
local locked = redis.call('PTTL', KEYS[2])
if locked > 0 then return {'locked', locked} end
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n > tonumber(ARGV[1]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
  redis.call('DEL', KEYS[1])
  return {'locked', tonumber(ARGV[2])}
end
return {'ok', n}`;

const wrongTotp = () => refuse('INVALID_MFA_CODE', 'invalid TOTP code');

/**
 * Checks one code of `userId` within the attempt budget: `check` answers what the code proves (a
 * TOTP code's time step, a recovery code's digest) or null. A wrong code is `wrong`, or ACCOUNT_LOCKED
 * when it was the last attempt of the window (locked).
 */
export async function withinAttempts<T>(redis: Redis, userId: string, now: Date, check: () => T | null, wrong: () => DomainError = wrongTotp): Promise<T> {
  const keys = mfaKeys(userId);
  const [outcome, n] = (await scriptCommand(redis, 'takeAttempt', TAKE_ATTEMPT, 2)(keys.attempts, keys.lock, MFA_LIMITS.maxAttempts, MFA_LIMITS.lockMs)) as [
    string,
    number,
  ];
  if (outcome === 'locked') throw mfaLocked(now, n);
  const matched = check();
  if (matched !== null) {
    await redis.del(keys.attempts);
    return matched;
  }
  if (wrongCodeLocks(n)) {
    await redis.multi().set(keys.lock, '1', 'PX', MFA_LIMITS.lockMs).del(keys.attempts).exec();
    throw mfaLocked(now, MFA_LIMITS.lockMs);
  }
  throw wrong();
}

/** The enrolment waiting for its first code: the sealed secret, for `enrolmentTtlSeconds`. */
export async function storeEnrolment(redis: Redis, userId: string, sealedSecret: string): Promise<void> {
  await redis.set(mfaKeys(userId).enrolment, sealedSecret, 'EX', MFA_LIMITS.enrolmentTtlSeconds);
}

export async function pendingEnrolment(redis: Redis, userId: string): Promise<string> {
  const sealed = await redis.get(mfaKeys(userId).enrolment);
  if (!sealed) throw refuse('MFA_ENROLMENT_NOT_FOUND', 'no enrolment waits for its first code: enrol again');
  return sealed;
}

export async function dropEnrolment(redis: Redis, userId: string): Promise<void> {
  await redis.del(mfaKeys(userId).enrolment);
}
