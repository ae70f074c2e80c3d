// The limits on guessing at an account (domain/user/attempt-limits.ts): the numbers the Redis
// counters apply, when a wrong second-factor code locks, and how recent a sign-in enrols MFA.
import t from 'tap';
import {
  accountLocked,
  ensureRecentSignIn,
  LOGIN_LIMITS,
  lookupThrottled,
  MFA_LIMITS,
  nextLookupAt,
  wrongCodeLocks,
} from '../../../domain/user/attempt-limits.ts';

const NOW = new Date('2026-11-27T10:00:00Z');

t.test('the numbers: 3 wrong codes per address, 10 per email, 5 second-factor codes, 15-minute locks', async (t) => {
  t.same([LOGIN_LIMITS.wrongCodesPerAddress, LOGIN_LIMITS.wrongCodesPerEmail, LOGIN_LIMITS.lockMs], [3, 10, 900_000]);
  t.same([MFA_LIMITS.maxAttempts, MFA_LIMITS.lockMs], [5, 900_000]);
  t.equal(nextLookupAt(NOW), '2026-11-27T10:00:30.000Z', 'one lookup per 30 seconds');
});

t.test('the wrong second-factor code at the last attempt of the window locks, not one before', async (t) => {
  t.notOk(wrongCodeLocks(MFA_LIMITS.maxAttempts - 1));
  t.ok(wrongCodeLocks(MFA_LIMITS.maxAttempts));
});

t.test('refusals say when to come back, never before now', async (t) => {
  t.match(accountLocked(NOW, 60_000), { reason: 'ACCOUNT_LOCKED', details: { nextRequestAt: '2026-11-27T10:01:00.000Z' } });
  t.match(lookupThrottled('recent', NOW, -2), { reason: 'LOOKUP_THROTTLED', details: { nextRequestAt: NOW.toISOString() } }, 'a key without expiry');
});

t.test('enrolling MFA needs a sign-in of the last 15 minutes', async (t) => {
  t.doesNotThrow(() => ensureRecentSignIn(new Date(NOW.getTime() - MFA_LIMITS.enrolSignInMaxAgeMs).toISOString(), NOW));
  t.throws(() => ensureRecentSignIn(new Date(NOW.getTime() - MFA_LIMITS.enrolSignInMaxAgeMs - 1).toISOString(), NOW), {
    reason: 'RECENT_SIGN_IN_REQUIRED',
    message: /sign in again/,
  });
  t.throws(() => ensureRecentSignIn(undefined, NOW), { reason: 'RECENT_SIGN_IN_REQUIRED', message: /sign in again/ }, 'a session unknown');
});
