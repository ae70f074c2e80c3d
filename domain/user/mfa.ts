// The second factor's rules: TOTP on and off, the one-time recovery codes, an administrator's reset,
// and what a session of a user with MFA on must show. Neither codes nor the secret reach the domain:
// only the sealed secret, the time steps of TOTP codes the sender checked, and keyed digests of
// recovery codes (infra/recovery-codes.ts), compared here in constant time.
import type { Command } from '../shared/decider.ts';
import { invariant, refuse } from '../shared/errors.ts';
import type { UserEvent } from './events.ts';
import { sameDigest } from './secret-compare.ts';
import type { MfaState, RegisteredUser } from './state.ts';

/** Codes in a set of recovery codes: each completes one sign-in. */
export const RECOVERY_CODE_COUNT = 10;

export type MfaCommand =
  | Command<'EnableMfa', { sealedSecret: string; timeStep: number; recoveryCodeDigests: string[] }>
  | Command<'DisableMfa', { timeStep: number }>
  | Command<'ReplaceRecoveryCodes', { timeStep: number; recoveryCodeDigests: string[] }>
  | Command<'ResetMfa', { by: string }>;

/** What a session of a user with MFA on starts with: the time step of a TOTP code, or the digest of a recovery code. */
export type SecondFactor = { timeStep: number } | { recoveryCodeDigest: string };

type Cmd<T extends MfaCommand['type']> = Extract<MfaCommand, { type: T }>;

const SHA256_HEX = /^[0-9a-f]{64}$/;

function mfaOf(state: RegisteredUser): MfaState {
  if (!state.mfa) throw refuse('MFA_NOT_ENABLED', 'MFA is not on');
  return state.mfa;
}

/** RFC 6238 section 5.2: a TOTP code is accepted once, so its time step must be newer than the last one used. */
export function assertFreshCode(lastTimeStep: number, timeStep: number): void {
  if (timeStep <= lastTimeStep) throw refuse('MFA_CODE_REUSED', 'this code was already used: wait for the next one');
}

/** A whole set, checked here too, so no sender can record fewer codes, repeated ones, or anything but digests. */
function issued(userId: string, codeDigests: string[], timeStep: number, issuedAt: string): UserEvent {
  const valid = codeDigests.length === RECOVERY_CODE_COUNT && new Set(codeDigests).size === RECOVERY_CODE_COUNT && codeDigests.every((d) => SHA256_HEX.test(d));
  invariant(valid, `a set of recovery codes is ${RECOVERY_CODE_COUNT} distinct HMAC-SHA256 digests`);
  return { type: 'MfaRecoveryCodesIssued', data: { userId, codeDigests, timeStep, issuedAt } };
}

/** The caller checked the first code against the new secret; its time step is the first one used. The first recovery codes come with it. */
export function enableMfa({ data, metadata: { now } }: Cmd<'EnableMfa'>, state: RegisteredUser): UserEvent[] {
  if (state.mfa) throw refuse('MFA_ALREADY_ENABLED', 'MFA is already on: disable it first to enrol a new authenticator');
  const at = now.toISOString();
  return [
    { type: 'MfaEnabled', data: { userId: state.userId, method: 'TOTP', sealedSecret: data.sealedSecret, timeStep: data.timeStep, enabledAt: at } },
    issued(state.userId, data.recoveryCodeDigests, data.timeStep, at),
  ];
}

/** Off with a current code; the recovery codes go with the secret. */
export function disableMfa({ data, metadata: { now } }: Cmd<'DisableMfa'>, state: RegisteredUser): UserEvent[] {
  assertFreshCode(mfaOf(state).lastTimeStep, data.timeStep);
  return [{ type: 'MfaDisabled', data: { userId: state.userId, timeStep: data.timeStep, disabledAt: now.toISOString() } }];
}

/** A current code (never one used before) replaces the whole set: the codes of the old set stop working, spent or not. */
export function replaceRecoveryCodes({ data, metadata: { now } }: Cmd<'ReplaceRecoveryCodes'>, state: RegisteredUser): UserEvent[] {
  assertFreshCode(mfaOf(state).lastTimeStep, data.timeStep);
  return [issued(state.userId, data.recoveryCodeDigests, data.timeStep, now.toISOString())];
}

/** An administrator turns MFA off for a user who lost the authenticator: no code, the administrator answers for it. */
export function resetMfa({ data, metadata: { now } }: Cmd<'ResetMfa'>, state: RegisteredUser): UserEvent[] {
  mfaOf(state);
  return [{ type: 'MfaReset', data: { userId: state.userId, by: data.by, resetAt: now.toISOString() } }];
}

/** The place of an unused recovery code with this digest, if any. Every code is compared (no early exit), each in constant time. */
export function unusedRecoveryCode(mfa: MfaState, digest: string): number | undefined {
  let found: number | undefined;
  mfa.recoveryCodes.forEach((stored, index) => {
    if (stored !== null && sameDigest(stored, digest)) found ??= index;
  });
  return found;
}

/**
 * What a session of a user with MFA on must show: a TOTP code newer than every code used before
 * (RFC 6238 section 5.2: a code is accepted once), or an unused recovery code, which the session
 * spends (its event goes before SessionStarted, in the same append). Decided on the stream, so two
 * requests racing with one code start one session. Answers those events and the time step the
 * session records; a user without MFA needs nothing.
 */
export function secondFactorOf(
  state: RegisteredUser,
  sessionId: string,
  factor: SecondFactor | undefined,
  at: string,
): { spent: UserEvent[]; mfaTimeStep?: number } {
  if (!state.mfa) return { spent: [] };
  if (!factor) throw refuse('MFA_REQUIRED', 'this account has MFA on: complete the sign-in with a TOTP code or a recovery code');
  if ('timeStep' in factor) {
    assertFreshCode(state.mfa.lastTimeStep, factor.timeStep);
    return { spent: [], mfaTimeStep: factor.timeStep };
  }
  const index = unusedRecoveryCode(state.mfa, factor.recoveryCodeDigest);
  if (index === undefined) throw refuse('INVALID_RECOVERY_CODE', 'invalid recovery code: wrong, or used already');
  return { spent: [{ type: 'MfaRecoveryCodeUsed', data: { userId: state.userId, index, sessionId, usedAt: at } }] };
}
