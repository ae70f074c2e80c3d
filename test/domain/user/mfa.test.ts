import t from 'tap';
import { userDecider, type UserCommand } from '../../../domain/user/decide.ts';
import type { UserEvent } from '../../../domain/user/events.ts';
import type { SecondFactor } from '../../../domain/user/mfa.ts';
import { at, scenario } from '../../support/given-when-then.ts';

// MFA recovery codes and the administrator's reset, at their boundaries. Digests stand for codes:
// the decider never sees a code.
const { given } = scenario(userDecider);

const now = new Date('2025-03-01T00:00:00.000Z');
const iso = now.toISOString();
const DAY = 86_400_000;
const userId = '33333333-3333-5333-8333-333333333333';
const ADMIN = '44444444-4444-5444-8444-444444444444';
const digest = (set: string, i: number) => `${set}${i.toString(16)}`.padEnd(64, '0');
const setOf = (set: string) => Array.from({ length: 10 }, (_, i) => digest(set, i));

const registered: UserEvent = {
  type: 'UserRegistered',
  data: {
    userId,
    email: 'rex@example.com',
    username: 'rex',
    role: 'user',
    tier: 'free',
    virtualWalletMode: true,
    languageCode: 'en',
    registeredAt: iso,
    signup: {},
  },
};
const mfaOn: UserEvent = { type: 'MfaEnabled', data: { userId, method: 'TOTP', sealedSecret: 'v1.sealed', timeStep: 100, enabledAt: iso } };
const issued = (set: string, timeStep = 100): UserEvent => ({
  type: 'MfaRecoveryCodesIssued',
  data: { userId, codeDigests: setOf(set), timeStep, issuedAt: iso },
});
const withCodes = [registered, mfaOn, issued('a')];

const command = (c: Omit<UserCommand, 'metadata'>, actor?: string) => ({ ...c, metadata: at(now, actor) }) as UserCommand;
const start = (sessionId: string, mfa?: SecondFactor) =>
  command({
    type: 'StartSession',
    data: {
      sessionId,
      refreshTokenHash: 'd'.repeat(64),
      userAgent: 'ua',
      userAgentHash: '0'.repeat(64),
      expiresAt: new Date(now.getTime() + 30 * DAY),
      ...(mfa ? { mfa } : {}),
    },
  });
const sessionStarted = (sessionId: string, mfaTimeStep?: number): UserEvent => ({
  type: 'SessionStarted',
  data: {
    userId,
    sessionId,
    refreshTokenHash: 'd'.repeat(64),
    userAgent: 'ua',
    userAgentHash: '0'.repeat(64),
    startedAt: iso,
    expiresAt: new Date(now.getTime() + 30 * DAY).toISOString(),
    ...(mfaTimeStep !== undefined ? { mfaTimeStep } : {}),
  },
});
const used = (index: number, sessionId: string): UserEvent => ({ type: 'MfaRecoveryCodeUsed', data: { userId, index, sessionId, usedAt: iso } });
const replace = (set: string[], timeStep: number) => command({ type: 'ReplaceRecoveryCodes', data: { timeStep, recoveryCodeDigests: set } });
const reset = command({ type: 'ResetMfa', data: { by: ADMIN } }, ADMIN);
const codesOf = (events: UserEvent[]) => {
  const state = given(events).state;
  return state.status === 'registered' ? state.mfa?.recoveryCodes : undefined;
};

t.test('an unused recovery code starts a session and is spent in the same decision', async (t) => {
  given(withCodes)
    .when(start('s1', { recoveryCodeDigest: digest('a', 3) }))
    .then(t, [used(3, 's1'), sessionStarted('s1')]);
  const left = codesOf([...withCodes, used(3, 's1'), sessionStarted('s1')]);
  t.equal(left?.filter((d) => d !== null).length, 9, 'nine left');
  t.equal(left?.[3], null, 'the spent one is gone');
});

t.test('a spent recovery code is refused; the others still work', async (t) => {
  const after = [...withCodes, used(3, 's1'), sessionStarted('s1')];
  given(after)
    .when(start('s2', { recoveryCodeDigest: digest('a', 3) }))
    .thenRefused(t, 'INVALID_RECOVERY_CODE', /used already/);
  given(after)
    .when(start('s2', { recoveryCodeDigest: digest('a', 9) }))
    .then(t, [used(9, 's2'), sessionStarted('s2')]);
});

t.test('two sign-ins racing with one recovery code: the second decision, run again on the new revision, is refused', async (t) => {
  const first = given(withCodes)
    .when(start('s1', { recoveryCodeDigest: digest('a', 0) }))
    .events();
  t.equal(first.length, 2);
  given([...withCodes, ...first])
    .when(start('s2', { recoveryCodeDigest: digest('a', 0) }))
    .thenRefused(t, 'INVALID_RECOVERY_CODE');
});

t.test('a digest of no code of the set is refused, and so is any before a set was issued', async (t) => {
  given(withCodes)
    .when(start('s1', { recoveryCodeDigest: digest('b', 0) }))
    .thenRefused(t, 'INVALID_RECOVERY_CODE');
  given([registered, mfaOn])
    .when(start('s1', { recoveryCodeDigest: digest('a', 0) }))
    .thenRefused(t, 'INVALID_RECOVERY_CODE');
  given(withCodes)
    .when(start('s1'))
    .thenRefused(t, 'MFA_REQUIRED', /TOTP code or a recovery code/);
});

t.test('a TOTP sign-in spends no recovery code', async (t) => {
  given(withCodes)
    .when(start('s1', { timeStep: 101 }))
    .then(t, [sessionStarted('s1', 101)]);
});

t.test('without MFA a session needs no second factor and spends nothing', async (t) => {
  given([registered])
    .when(start('s1', { recoveryCodeDigest: digest('a', 0) }))
    .then(t, [sessionStarted('s1')]);
});

t.test('a current TOTP code replaces the set: the old codes stop working, the new ones work', async (t) => {
  given(withCodes)
    .when(replace(setOf('b'), 101))
    .then(t, [issued('b', 101)]);
  const replaced = [...withCodes, used(2, 's1'), issued('b', 101)];
  t.same(codesOf(replaced), setOf('b'), 'a whole new set, nothing spent');
  given(replaced)
    .when(start('s2', { recoveryCodeDigest: digest('a', 5) }))
    .thenRefused(t, 'INVALID_RECOVERY_CODE');
  given(replaced)
    .when(start('s2', { recoveryCodeDigest: digest('b', 5) }))
    .then(t, [used(5, 's2'), sessionStarted('s2')]);
  given(replaced)
    .when(start('s2', { timeStep: 101 }))
    .thenRefused(t, 'MFA_CODE_REUSED', undefined);
});

t.test('replacing the set needs a code newer than the last one used, and MFA on', async (t) => {
  given(withCodes)
    .when(replace(setOf('b'), 100))
    .thenRefused(t, 'MFA_CODE_REUSED');
  given([registered])
    .when(replace(setOf('b'), 101))
    .thenRefused(t, 'MFA_NOT_ENABLED');
  given([])
    .when(replace(setOf('b'), 101))
    .thenRefused(t, 'USER_NOT_FOUND');
});

t.test('a set is exactly ten distinct digests: the server makes it, so another is a bug', async (t) => {
  given(withCodes)
    .when(replace(setOf('b').slice(0, 9), 101))
    .thenViolates(t, /10 distinct/);
  given(withCodes)
    .when(replace([...setOf('b').slice(0, 9), digest('b', 0)], 101))
    .thenViolates(t, /10 distinct/);
  given(withCodes)
    .when(replace([...setOf('b').slice(0, 9), 'ABCD-EFGH'], 101))
    .thenViolates(t, /10 distinct/);
  const enable = command({ type: 'EnableMfa', data: { sealedSecret: 'v1.sealed', timeStep: 100, recoveryCodeDigests: [] } });
  given([registered])
    .when(enable)
    .thenViolates(t, /10 distinct/);
});

t.test('disabling MFA drops the codes: turned on again, only the new set works', async (t) => {
  const off: UserEvent = { type: 'MfaDisabled', data: { userId, timeStep: 101, disabledAt: iso } };
  t.equal(codesOf([...withCodes, off]), undefined, 'no MFA, no codes');
  given([...withCodes, off])
    .when(start('s1', { recoveryCodeDigest: digest('a', 0) }))
    .then(t, [sessionStarted('s1')]);
  const again = [...withCodes, off, { ...mfaOn, data: { ...mfaOn.data, timeStep: 200 } } as UserEvent, issued('c', 200)];
  given(again)
    .when(start('s1', { recoveryCodeDigest: digest('a', 0) }))
    .thenRefused(t, 'INVALID_RECOVERY_CODE');
  given(again)
    .when(start('s1', { recoveryCodeDigest: digest('c', 0) }))
    .then(t, [used(0, 's1'), sessionStarted('s1')]);
});

t.test('an administrator resets MFA: the event names them; the secret and the codes are gone', async (t) => {
  const resetEvent: UserEvent = { type: 'MfaReset', data: { userId, by: ADMIN, resetAt: iso } };
  given(withCodes).when(reset).then(t, [resetEvent]);
  t.equal(codesOf([...withCodes, resetEvent]), undefined);
  given([...withCodes, resetEvent])
    .when(start('s1'))
    .then(t, [sessionStarted('s1')], 'the next sign-in needs no second factor');
  given([...withCodes, resetEvent])
    .when(reset)
    .thenRefused(t, 'MFA_NOT_ENABLED');
  given([registered]).when(reset).thenRefused(t, 'MFA_NOT_ENABLED');
  given([]).when(reset).thenRefused(t, 'USER_NOT_FOUND');
});

t.test('after a reset, a new enrolment starts afresh: any time step, a new set', async (t) => {
  const resetEvent: UserEvent = { type: 'MfaReset', data: { userId, by: ADMIN, resetAt: iso } };
  const enable = command({ type: 'EnableMfa', data: { sealedSecret: 'v1.other', timeStep: 50, recoveryCodeDigests: setOf('d') } });
  t.equal(
    given([...withCodes, resetEvent])
      .when(enable)
      .events().length,
    2,
  );
});
