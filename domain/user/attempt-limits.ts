// The limits on guessing at an account, pure: how many lookups and wrong codes count, over which
// windows, what a lock lasts, and the refusals they give. The counters themselves are Redis stores
// (commands/users/login-codes.ts, commands/users/mfa-store.ts), which apply these numbers atomically.
import { refuse } from '../shared/errors.ts';

// Wrong emailed codes are counted per email and per (email, client address). One address reaches
// its own limit first and is refused for that email, while the owner, who has the code, still signs
// in from elsewhere; only several addresses together (distributed guessing) lock the email for everybody.
export const LOGIN_LIMITS = {
  lookupIntervalMs: 30_000,
  lookupsPerHour: 5,
  /** the window of `lookupsPerHour`, and of a client address's lookups */
  lookupWindowMs: 3_600_000,
  /** wrong codes for one email from one address: the one that reaches it refuses that address for that email for `lockMs` */
  wrongCodesPerAddress: 3,
  /** wrong codes for one email from any addresses (so at least four): the one that reaches it locks the email for `lockMs` */
  wrongCodesPerEmail: 10,
  lockMs: 15 * 60_000,
} as const;

// Second-factor codes (TOTP and recovery codes alike: both are guesses at one account) share one
// budget per user and window, right or wrong; a right code gives the budget back.
export const MFA_LIMITS = {
  /** codes a user may try per window, right or wrong: the one that is wrong at the limit locks */
  maxAttempts: 5,
  /** the window, and the lock that follows it */
  lockMs: 15 * 60_000,
  enrolmentTtlSeconds: 600,
  /** how recent the session's sign-in must be to enrol (a refresh does not count) */
  enrolSignInMaxAgeMs: 15 * 60_000,
} as const;

const after = (now: Date, ms: number) => new Date(now.getTime() + Math.max(ms, 0)).toISOString();

/** When the next lookup may be asked for, after one taken at `now`. */
export const nextLookupAt = (now: Date): string => after(now, LOGIN_LIMITS.lookupIntervalMs);

const THROTTLED = {
  recent: 'a code was sent recently: retry after nextRequestAt',
  hourly: 'too many codes requested: retry after nextRequestAt',
  address: 'too many codes asked for from this address: retry after nextRequestAt',
} as const;

/** A lookup refused: one was made within the interval, or too many this hour for the email or from the address. */
export const lookupThrottled = (why: keyof typeof THROTTLED, now: Date, msLeft: number) =>
  refuse('LOOKUP_THROTTLED', THROTTLED[why], { nextRequestAt: after(now, msLeft) });

/** The email locked after too many wrong emailed codes. */
export const accountLocked = (now: Date, msLeft: number) =>
  refuse('ACCOUNT_LOCKED', 'too many wrong codes: the account is temporarily locked', { nextRequestAt: after(now, msLeft) });

/** This client address refused for this email after too many wrong codes from it (the account is not locked). */
export const addressLocked = (now: Date, msLeft: number) =>
  refuse('ADDRESS_LOCKED', 'too many wrong codes for this email from this address: try again after nextRequestAt', { nextRequestAt: after(now, msLeft) });

/** A wrong emailed code, or one expired or used already. */
export const invalidCode = () => refuse('INVALID_CODE', 'invalid or expired code');

/** MFA locked for the account after too many second-factor codes. */
export const mfaLocked = (now: Date, msLeft: number) =>
  refuse('ACCOUNT_LOCKED', 'too many wrong codes: MFA is locked for this account for a while', { nextRequestAt: after(now, msLeft) });

/** A wrong second-factor code locks when it was the window's last attempt (`attempt` counts from 1). */
export const wrongCodeLocks = (attempt: number): boolean => attempt >= MFA_LIMITS.maxAttempts;

/** Enrolling an authenticator needs a sign-in of the session within `enrolSignInMaxAgeMs`: a stolen token must not bind the attacker's. */
export function ensureRecentSignIn(signedInAt: string | undefined, now: Date): void {
  if (!signedInAt || now.getTime() - Date.parse(signedInAt) > MFA_LIMITS.enrolSignInMaxAgeMs) {
    throw refuse('RECENT_SIGN_IN_REQUIRED', `sign in again to turn MFA on: it needs a sign-in of the last ${MFA_LIMITS.enrolSignInMaxAgeMs / 60_000} minutes`);
  }
}
