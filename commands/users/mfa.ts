// MFA with TOTP: enrol (a secret shown once), confirm with a first code (then it is on), disable
// with a current code, and POST /api/auth/mfa/verify, which completes a sign-in with a code. The
// secret is sealed wherever it is kept (the pending enrolment in Redis, MfaEnabled in the stream).
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { userDecider } from '../../domain/user/decide.ts';
import type { RegisteredUser } from '../../domain/user/state.ts';
import { decryptSecret, encryptSecret } from '../../infra/secrets.ts';
import { matchTotp, TOTP_SECRET_BYTES, totpSecretOf, totpUri } from '../../infra/totp.ts';
import type { Tools } from '../dispatch.ts';
import { dropEnrolment, MFA_LIMITS, mfaTokenUser, pendingEnrolment, spendMfaToken, storeEnrolment, withinAttempts } from './mfa-store.ts';
import { startSession, type StartedSession } from './sign-in.ts';

/** Purpose of the sealed TOTP secrets (infra/secrets.ts): its own key. */
export const MFA_SECRET_PURPOSE = 'mfa-totp-secret';
/** The name authenticator apps show above the code. */
export const TOTP_ISSUER = 'Agent Trading';

export interface MfaEnrolment {
  /** the Base32 secret, shown this once */
  secret: string;
  otpauthUri: string;
  /** the first code must confirm the enrolment before this */
  expiresAt: string;
}

async function registeredUser(tools: Tools, userId: string): Promise<RegisteredUser> {
  const { state } = await tools.load(userDecider, userId);
  if (state.status !== 'registered') throw refuse('USER_NOT_FOUND', 'user not found');
  return state;
}

/** A new secret, kept (sealed) until a first code confirms it; a new enrolment replaces a pending one. */
export async function enrolMfa({ data, metadata }: Command<'EnrolMfa', { userId: string }>, tools: Tools): Promise<MfaEnrolment> {
  const { redis, ids, config } = tools.deps;
  const user = await registeredUser(tools, data.userId);
  if (user.mfa) throw refuse('MFA_ALREADY_ENABLED', 'MFA is already on: disable it first to enrol a new authenticator');
  const secret = totpSecretOf(Buffer.from(ids.token(TOTP_SECRET_BYTES), 'base64url'));
  await storeEnrolment(redis, data.userId, encryptSecret(secret, config.JWT_SECRET, MFA_SECRET_PURPOSE));
  return {
    secret,
    otpauthUri: totpUri(secret, TOTP_ISSUER, user.email),
    expiresAt: new Date(metadata.now.getTime() + MFA_LIMITS.enrolmentTtlSeconds * 1000).toISOString(),
  };
}

/** The first code of the pending secret turns MFA on (MfaEnabled keeps the secret sealed). */
export async function confirmMfa({ data, metadata }: Command<'ConfirmMfa', { userId: string; code: string }>, tools: Tools): Promise<Record<string, never>> {
  const { redis, config } = tools.deps;
  const user = await registeredUser(tools, data.userId);
  if (user.mfa) throw refuse('MFA_ALREADY_ENABLED', 'MFA is already on');
  const sealedSecret = await pendingEnrolment(redis, data.userId);
  const secret = decryptSecret(sealedSecret, config.JWT_SECRET, MFA_SECRET_PURPOSE);
  const { timeStep } = await withinAttempts(redis, data.userId, metadata.now, () => matchTotp(secret, data.code, metadata.now));
  await tools.execute(userDecider, data.userId, { type: 'EnableMfa', data: { sealedSecret, timeStep } });
  await dropEnrolment(redis, data.userId);
  return {};
}

/** MFA off, with a current code (not one already used). */
export async function disableMfa({ data, metadata }: Command<'DisableMfa', { userId: string; code: string }>, tools: Tools): Promise<Record<string, never>> {
  const { redis, config } = tools.deps;
  const user = await registeredUser(tools, data.userId);
  if (!user.mfa) throw refuse('MFA_NOT_ENABLED', 'MFA is not on');
  const secret = decryptSecret(user.mfa.sealedSecret, config.JWT_SECRET, MFA_SECRET_PURPOSE);
  const { timeStep } = await withinAttempts(redis, data.userId, metadata.now, () => matchTotp(secret, data.code, metadata.now));
  await tools.execute(userDecider, data.userId, { type: 'DisableMfa', data: { timeStep } });
  return {};
}

export interface CompleteMfaData {
  mfaAccessToken: string;
  code: string;
  userAgent: string;
}

/**
 * Completes a sign-in: the token names the user, the code must match their secret within the
 * attempt budget and be newer than every code used before. A replayed code is refused without
 * spending the token (the user may type the next code); a right code spends it, then the session
 * starts (its decision checks the time step again, on the stream).
 */
export async function completeMfaSignIn({ data, metadata }: Command<'CompleteMfaSignIn', CompleteMfaData>, tools: Tools): Promise<StartedSession> {
  const { redis, config } = tools.deps;
  const userId = await mfaTokenUser(redis, data.mfaAccessToken);
  const asUser = tools.as(userId);
  const user = await registeredUser(asUser, userId);
  // MFA turned off since the token was issued: a new sign-in needs no code.
  if (!user.mfa) throw refuse('INVALID_MFA_TOKEN', 'MFA is no longer on for this account: sign in again');
  const secret = decryptSecret(user.mfa.sealedSecret, config.JWT_SECRET, MFA_SECRET_PURPOSE);
  const { timeStep } = await withinAttempts(redis, userId, metadata.now, () => matchTotp(secret, data.code, metadata.now));
  if (timeStep <= user.mfa.lastTimeStep) throw refuse('MFA_CODE_REUSED', 'this code was already used: wait for the next one');
  if (!(await spendMfaToken(redis, data.mfaAccessToken))) throw refuse('INVALID_MFA_TOKEN', 'invalid or expired mfaAccessToken: sign in again');
  return startSession(asUser, userId, data.userAgent, timeStep);
}
