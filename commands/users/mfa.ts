// MFA with TOTP: enrol (a secret shown once), confirm with a first code (then it is on, and the
// first recovery codes are shown once), disable with a current code, new recovery codes with a
// current code, an administrator's reset, and POST /api/auth/mfa/verify, which completes a sign-in
// with a TOTP code or a recovery code. The secret is sealed wherever it is kept (the pending
// enrolment in Redis, MfaEnabled in the stream); recovery codes are recorded only as keyed digests.
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { assertFreshCode, RECOVERY_CODE_COUNT, unusedRecoveryCode, type SecondFactor } from '../../domain/user/mfa.ts';
import type { MfaState, RegisteredUser } from '../../domain/user/state.ts';
import { keyEncryptionKeyOf } from '../../infra/api-keys.ts';
import { canonicalRecoveryCode, randomRecoveryCode, recoveryCodeDigest, showRecoveryCode } from '../../infra/recovery-codes.ts';
import { decryptSecret, encryptSecret } from '../../infra/secrets.ts';
import { matchTotp, TOTP_SECRET_BYTES, totpSecretOf, totpUri } from '../../infra/totp.ts';
import type { Tools } from '../tools.ts';
import { ensureRecentSignIn, MFA_LIMITS } from '../../domain/user/attempt-limits.ts';
import { dropEnrolment, mfaKeys, mfaTokenUser, pendingEnrolment, spendMfaToken, storeEnrolment, withinAttempts } from './mfa-store.ts';
import { startSession } from './sign-in.ts';
import type { MfaEnrolment, RecoveryCodes, CompleteMfaData, StartedSession } from './commands.ts';

/** Purpose of the sealed TOTP secrets (infra/secrets.ts): its own key. */
export const MFA_SECRET_PURPOSE = 'mfa-totp-secret';
/** The name authenticator apps show above the code. */
export const TOTP_ISSUER = 'Agent Trading';

async function registeredUser(tools: Tools, userId: string): Promise<RegisteredUser> {
  const { state } = await tools.load(userDecider, userId);
  if (state.status !== 'registered') throw refuse('USER_NOT_FOUND', 'user not found');
  return state;
}

/** A new secret, kept (sealed) until a first code confirms it; a new enrolment replaces a pending one. */
export async function enrolMfa({ data, metadata }: Command<'EnrolMfa', { userId: string; sessionId: string }>, tools: Tools): Promise<MfaEnrolment> {
  const { redis, ids, config } = tools.deps;
  const user = await registeredUser(tools, data.userId);
  if (user.mfa) throw refuse('MFA_ALREADY_ENABLED', 'MFA is already on: disable it first to enrol a new authenticator');
  // A stolen access token (or a session left open) must not bind the attacker's authenticator: enrolling needs a fresh sign-in.
  ensureRecentSignIn(user.sessions[data.sessionId]?.startedAt, metadata.now);
  const secret = totpSecretOf(Buffer.from(ids.token(TOTP_SECRET_BYTES), 'base64url'));
  await storeEnrolment(redis, data.userId, encryptSecret(secret, config.JWT_SECRET, MFA_SECRET_PURPOSE));
  return {
    secret,
    otpauthUri: totpUri(secret, TOTP_ISSUER, user.email),
    expiresAt: new Date(metadata.now.getTime() + MFA_LIMITS.enrolmentTtlSeconds * 1000).toISOString(),
  };
}

/**
 * A new set of recovery codes: the codes to show and their digests to record. The digest key comes
 * from KEY_ENCRYPTION_KEY, as API key hashes do, not from JWT_SECRET: rotating JWT_SECRET makes the
 * sealed TOTP secrets unreadable, and that is when the recovery codes must still work.
 */
function newRecoveryCodes(tools: Tools, userId: string): { shown: RecoveryCodes; digests: string[] } {
  const key = keyEncryptionKeyOf(tools.deps.config);
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => randomRecoveryCode(tools.deps.ids));
  return { shown: { recoveryCodes: codes.map(showRecoveryCode) }, digests: codes.map((code) => recoveryCodeDigest(userId, code, key)) };
}

/** The sealed TOTP secret opened; `unreadable` refuses when it no longer opens (JWT_SECRET rotated since it was sealed). */
function openTotpSecret(sealed: string, jwtSecret: string, unreadable: () => Error): string {
  try {
    return decryptSecret(sealed, jwtSecret, MFA_SECRET_PURPOSE);
  } catch {
    throw unreadable();
  }
}

/** A TOTP code of the user's secret, within the attempt budget: its time step (the decider refuses a step already used). */
async function checkTotp(tools: Tools, userId: string, mfa: MfaState, code: string): Promise<{ timeStep: number }> {
  const { redis, config } = tools.deps;
  const { now } = tools.metadata;
  const secret = openTotpSecret(mfa.sealedSecret, config.JWT_SECRET, () =>
    refuse(
      'MFA_SECRET_UNREADABLE',
      "the authenticator's secret can no longer be read (the server's key changed): sign in with a recovery code, or ask an administrator to reset MFA",
    ),
  );
  return withinAttempts(redis, userId, now, () => matchTotp(secret, code, now));
}

/** An unused recovery code of the current set, within the same attempt budget as TOTP codes: its digest. */
async function checkRecoveryCode(tools: Tools, userId: string, mfa: MfaState, code: string): Promise<{ recoveryCodeDigest: string }> {
  const canonical = canonicalRecoveryCode(code);
  const digest = canonical === null ? null : recoveryCodeDigest(userId, canonical, keyEncryptionKeyOf(tools.deps.config));
  const matches = () => (digest !== null && unusedRecoveryCode(mfa, digest) !== undefined ? { recoveryCodeDigest: digest } : null);
  return withinAttempts(tools.deps.redis, userId, tools.metadata.now, matches, () =>
    refuse('INVALID_RECOVERY_CODE', 'invalid recovery code: wrong, or used already'),
  );
}

/** The first code of the pending secret turns MFA on (MfaEnabled keeps the secret sealed); the first recovery codes are answered this once. */
export async function confirmMfa({ data, metadata }: Command<'ConfirmMfa', { userId: string; code: string }>, tools: Tools): Promise<RecoveryCodes> {
  const { redis, config } = tools.deps;
  const user = await registeredUser(tools, data.userId);
  if (user.mfa) throw refuse('MFA_ALREADY_ENABLED', 'MFA is already on');
  const sealedSecret = await pendingEnrolment(redis, data.userId);
  const secret = openTotpSecret(sealedSecret, config.JWT_SECRET, () =>
    refuse('MFA_ENROLMENT_NOT_FOUND', 'the pending enrolment can no longer be read (the server key changed): enrol again'),
  );
  const { timeStep } = await withinAttempts(redis, data.userId, metadata.now, () => matchTotp(secret, data.code, metadata.now));
  const { shown, digests } = newRecoveryCodes(tools, data.userId);
  await tools.execute(userDecider, data.userId, { type: 'EnableMfa', data: { sealedSecret, timeStep, recoveryCodeDigests: digests } });
  await dropEnrolment(redis, data.userId);
  return shown;
}

/** MFA off, with a current code (not one already used); the recovery codes go with it. */
export async function disableMfa({ data }: Command<'DisableMfa', { userId: string; code: string }>, tools: Tools): Promise<Record<string, never>> {
  const user = await registeredUser(tools, data.userId);
  if (!user.mfa) throw refuse('MFA_NOT_ENABLED', 'MFA is not on');
  const { timeStep } = await checkTotp(tools, data.userId, user.mfa, data.code);
  await tools.execute(userDecider, data.userId, { type: 'DisableMfa', data: { timeStep } });
  return {};
}

/** A new set of recovery codes for a current TOTP code: the old set stops working; the new one is answered this once. */
export async function replaceRecoveryCodes({ data }: Command<'ReplaceRecoveryCodes', { userId: string; code: string }>, tools: Tools): Promise<RecoveryCodes> {
  const user = await registeredUser(tools, data.userId);
  if (!user.mfa) throw refuse('MFA_NOT_ENABLED', 'MFA is not on: recovery codes come with it');
  const { timeStep } = await checkTotp(tools, data.userId, user.mfa, data.code);
  const { shown, digests } = newRecoveryCodes(tools, data.userId);
  await tools.execute(userDecider, data.userId, { type: 'ReplaceRecoveryCodes', data: { timeStep, recoveryCodeDigests: digests } });
  return shown;
}

/** An administrator (the actor, recorded as `by`) turns a user's MFA off: the user lost the authenticator and every recovery code. */
export async function resetMfa({ data, metadata }: Command<'ResetMfa', { userId: string }>, tools: Tools): Promise<{ userId: string; mfaEnabled: false }> {
  // A user locked out by wrong codes can enrol again at once: lifted first, so a Redis failure
  // leaves nothing recorded and the administrator's retry does both.
  const keys = mfaKeys(data.userId);
  await tools.deps.redis.del(keys.attempts, keys.lock);
  await tools.execute(userDecider, data.userId, { type: 'ResetMfa', data: { by: metadata.actor } });
  return { userId: data.userId, mfaEnabled: false };
}

/** The second factor given, checked within the attempt budget; a TOTP code must also be newer than every code used before. */
async function checkSecondFactor(tools: Tools, userId: string, mfa: MfaState, data: CompleteMfaData): Promise<SecondFactor> {
  if (data.code !== undefined && data.recoveryCode === undefined) {
    const { timeStep } = await checkTotp(tools, userId, mfa, data.code);
    // Checked before the token is spent too, so a replayed code leaves the user the token for the next one.
    assertFreshCode(mfa.lastTimeStep, timeStep);
    return { timeStep };
  }
  if (data.recoveryCode !== undefined && data.code === undefined) return checkRecoveryCode(tools, userId, mfa, data.recoveryCode);
  throw refuse('VALIDATION_FAILED', 'give exactly one of code and recoveryCode');
}

/**
 * Completes a sign-in: the token names the user, the code (TOTP or recovery) must match within the
 * attempt budget. A replayed TOTP code is refused without spending the token (the user may type
 * the next code); a right code spends it, then the session starts: its decision checks the code
 * again on the stream (a TOTP step newer than the last, a recovery code unused, which it spends).
 */
export async function completeMfaSignIn({ data }: Command<'CompleteMfaSignIn', CompleteMfaData>, tools: Tools): Promise<StartedSession> {
  const userId = await mfaTokenUser(tools.deps.redis, data.mfaAccessToken);
  const asUser = tools.as(userId);
  const user = await registeredUser(asUser, userId);
  // MFA turned off since the token was issued (by the user or an administrator): a new sign-in needs no code.
  if (!user.mfa) throw refuse('INVALID_MFA_TOKEN', 'MFA is no longer on for this account: sign in again');
  const factor = await checkSecondFactor(asUser, userId, user.mfa, data);
  if (!(await spendMfaToken(tools.deps.redis, data.mfaAccessToken))) throw refuse('INVALID_MFA_TOKEN', 'invalid or expired mfaAccessToken: sign in again');
  return startSession(asUser, userId, data.userAgent, factor);
}
