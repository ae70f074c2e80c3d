import t from 'tap';
import { userDecider, type UserCommand } from '../../../domain/user/decide.ts';
import type { UserEvent } from '../../../domain/user/events.ts';
import { at as metadataAt, scenario } from '../../support/given-when-then.ts';

// Given past events, when a command, then new events (or a refusal of the catalogue).
const { given } = scenario(userDecider);

const now = new Date('2025-01-01T00:00:00.000Z');
const later = (ms: number) => new Date(now.getTime() + ms);
const DAY = 86_400_000;
const userId = '11111111-1111-5111-8111-111111111111';
const h = (c: string) => c.repeat(64);

const registered: UserEvent = {
  type: 'UserRegistered',
  data: {
    userId,
    email: 'ann@example.com',
    username: 'ann',
    role: 'user',
    tier: 'free',
    virtualWalletMode: true,
    languageCode: 'en',
    registeredAt: now.toISOString(),
    signup: {},
  },
};
const started: UserEvent = {
  type: 'SessionStarted',
  data: {
    userId,
    sessionId: 's1',
    refreshTokenHash: h('a'),
    userAgent: 'ua',
    userAgentHash: h('0'),
    startedAt: now.toISOString(),
    expiresAt: later(30 * DAY).toISOString(),
  },
};
const refreshed: UserEvent = {
  type: 'SessionRefreshed',
  data: { userId, sessionId: 's1', refreshTokenHash: h('b'), refreshedAt: later(1000).toISOString(), expiresAt: later(31 * DAY).toISOString() },
};
const refresh = (hash: string, uaHash = h('0'), at = later(2000)): UserCommand => ({
  type: 'RefreshSession',
  data: { refreshTokenHash: hash, userAgentHash: uaHash },
  metadata: metadataAt(at),
});
const register = (isAdminEmail: boolean): UserCommand => ({
  type: 'RegisterUser',
  data: { userId, email: 'ann@example.com', username: 'ann', isAdminEmail, signup: { agreedToTerms: true } },
  metadata: metadataAt(now),
});

t.test('registration makes a free user in the virtual wallet, English by default', async (t) => {
  given([])
    .when(register(false))
    .then(t, [{ ...registered, data: { ...registered.data, signup: { agreedToTerms: true } } } as UserEvent]);
});

t.test('an email in ADMIN_EMAILS registers as an administrator', async (t) => {
  const [event] = given([]).when(register(true)).events();
  t.equal(event?.type === 'UserRegistered' && event.data.role, 'admin');
});

t.test('registering the same email again changes nothing', async (t) => {
  given([registered]).when(register(false)).then(t, []);
});

t.test('a command for an unregistered user is 404', async (t) => {
  given([])
    .when({ type: 'UpdateProfile', data: { languageCode: 'de' }, metadata: metadataAt(now) })
    .thenRefused(t, 'USER_NOT_FOUND');
});

t.test('a profile update records only what changed', async (t) => {
  given([registered])
    .when({ type: 'UpdateProfile', data: { languageCode: 'de', virtualWalletMode: true, username: 'bob' }, metadata: metadataAt(now) })
    .then(t, [
      { type: 'UsernameChanged', data: { userId, username: 'bob', previousUsername: 'ann', changedAt: now.toISOString() } },
      { type: 'UserProfileUpdated', data: { userId, languageCode: 'de', updatedAt: now.toISOString() } },
    ]);
  given([registered])
    .when({ type: 'UpdateProfile', data: { languageCode: 'en' }, metadata: metadataAt(now) })
    .then(t, []);
});

t.test('listing an agent makes a user a developer, once', async (t) => {
  const grant: UserCommand = { type: 'GrantRole', data: { role: 'developer', reason: 'agent_listed' }, metadata: metadataAt(now) };
  given([registered])
    .when(grant)
    .then(t, [{ type: 'RoleGranted', data: { userId, role: 'developer', previousRole: 'user', reason: 'agent_listed', grantedAt: now.toISOString() } }]);
  const developer: UserEvent = { type: 'RoleGranted', data: { userId, role: 'developer', previousRole: 'user', reason: 'x', grantedAt: now.toISOString() } };
  given([registered, developer]).when(grant).then(t, []);
});

t.test('becoming a developer never downgrades an administrator', async (t) => {
  const admin: UserEvent = { type: 'RoleGranted', data: { userId, role: 'admin', previousRole: 'user', reason: 'admin_grant', grantedAt: now.toISOString() } };
  given([registered, admin])
    .when({ type: 'GrantRole', data: { role: 'developer', reason: 'agent_listed' }, metadata: metadataAt(now) })
    .then(t, []);
  given([registered, admin])
    .when({ type: 'GrantRole', data: { role: 'admin', reason: 'admin_grant' }, metadata: metadataAt(now) })
    .then(t, []);
});

t.test('a session starts with the digests of its refresh token and user agent', async (t) => {
  given([registered])
    .when({
      type: 'StartSession',
      data: { sessionId: 's1', refreshTokenHash: h('a'), userAgent: 'ua', userAgentHash: h('0'), expiresAt: later(30 * DAY) },
      metadata: metadataAt(now),
    })
    .then(t, [started]);
});

t.test('a refresh with the token from the same user agent keeps the token and its term, however often', async (t) => {
  const again = (at: number): UserEvent => ({
    type: 'SessionRefreshed',
    data: { userId, sessionId: 's1', refreshTokenHash: h('a'), refreshedAt: later(at).toISOString(), expiresAt: later(30 * DAY).toISOString() },
  });
  given([registered, started])
    .when(refresh(h('a')))
    .then(t, [again(2000)]);
  given([registered, started, again(1000), again(1500)])
    .when(refresh(h('a')))
    .then(t, [again(2000)]);
});

t.test('a refresh from another user agent is 401', async (t) => {
  given([registered, started])
    .when(refresh(h('a'), h('9')))
    .thenRefused(t, 'INVALID_REFRESH_TOKEN');
});

t.test('an unknown refresh token is 401', async (t) => {
  given([registered, started])
    .when(refresh(h('e')))
    .thenRefused(t, 'INVALID_REFRESH_TOKEN');
  given([])
    .when(refresh(h('e')))
    .thenRefused(t, 'INVALID_REFRESH_TOKEN');
});

t.test('an expired refresh token is 401', async (t) => {
  given([registered, started])
    .when(refresh(h('a'), h('0'), later(30 * DAY)))
    .thenRefused(t, 'INVALID_REFRESH_TOKEN');
});

t.test('a session rotated under the former rule refreshes with its newest token; a token rotated away ends it', async (t) => {
  // `refreshed` is a rotation recorded before refreshes kept the token: a to b, the term to 31 days.
  const kept = (): UserEvent => ({
    type: 'SessionRefreshed',
    data: { userId, sessionId: 's1', refreshTokenHash: h('b'), refreshedAt: later(2000).toISOString(), expiresAt: later(31 * DAY).toISOString() },
  });
  const reused: UserEvent = { type: 'SessionEnded', data: { userId, sessionId: 's1', reason: 'refresh_token_reused', endedAt: later(2000).toISOString() } };
  given([registered, started, refreshed])
    .when(refresh(h('b')))
    .then(t, [kept()]);
  given([registered, started, refreshed])
    .when(refresh(h('a')))
    .then(t, [reused]);
  given([registered, started, refreshed])
    .when(refresh(h('b'), h('9')))
    .thenRefused(t, 'INVALID_REFRESH_TOKEN');
  given([registered, started, refreshed])
    .when(refresh(h('b'), h('0'), later(31 * DAY)))
    .thenRefused(t, 'INVALID_REFRESH_TOKEN');
});

t.test('a refresh a millisecond before the term from sign-in ends works; at its end it is 401', async (t) => {
  const refreshedAgain: UserEvent = {
    type: 'SessionRefreshed',
    data: { userId, sessionId: 's1', refreshTokenHash: h('a'), refreshedAt: later(29 * DAY).toISOString(), expiresAt: later(30 * DAY).toISOString() },
  };
  given([registered, started, refreshedAgain])
    .when(refresh(h('a'), h('0'), later(30 * DAY - 1)))
    .then(t, [{ type: 'SessionRefreshed', data: { ...refreshedAgain.data, refreshedAt: later(30 * DAY - 1).toISOString() } }]);
  given([registered, started, refreshedAgain])
    .when(refresh(h('a'), h('0'), later(30 * DAY)))
    .thenRefused(t, 'INVALID_REFRESH_TOKEN');
});

t.test('a refresh of a session signed out or ended by an administrator is 401, with any of its tokens', async (t) => {
  for (const reason of ['signed_out', 'ended_by_admin'] as const) {
    const ended: UserEvent = { type: 'SessionEnded', data: { userId, sessionId: 's1', reason, endedAt: now.toISOString() } };
    given([registered, started, ended])
      .when(refresh(h('a')))
      .thenRefused(t, 'INVALID_REFRESH_TOKEN');
    given([registered, started, refreshed, ended])
      .when(refresh(h('a')))
      .thenRefused(t, 'INVALID_REFRESH_TOKEN');
    given([registered, started, refreshed, ended])
      .when(refresh(h('b')))
      .thenRefused(t, 'INVALID_REFRESH_TOKEN');
  }
});

t.test('sign-out ends the session once; unknown and ended tokens change nothing', async (t) => {
  const signOut = (hash: string): UserCommand => ({ type: 'EndSession', data: { refreshTokenHash: hash }, metadata: metadataAt(now) });
  const ended: UserEvent = { type: 'SessionEnded', data: { userId, sessionId: 's1', reason: 'signed_out', endedAt: now.toISOString() } };
  given([registered, started])
    .when(signOut(h('a')))
    .then(t, [ended]);
  given([registered, started, ended])
    .when(signOut(h('a')))
    .then(t, []);
  given([registered, started])
    .when(signOut(h('e')))
    .then(t, []);
  given([])
    .when(signOut(h('e')))
    .then(t, []);
});

const mfaOn: UserEvent = {
  type: 'MfaEnabled',
  data: { userId, method: 'TOTP', sealedSecret: 'v1.sealed', timeStep: 100, enabledAt: now.toISOString() },
};
const digests = Array.from({ length: 10 }, (_, i) => h(i.toString(16)));
const codesIssued: UserEvent = { type: 'MfaRecoveryCodesIssued', data: { userId, codeDigests: digests, timeStep: 100, issuedAt: now.toISOString() } };
const startWithCode = (sessionId: string, mfaTimeStep?: number): UserCommand => ({
  type: 'StartSession',
  data: {
    sessionId,
    refreshTokenHash: h('d'),
    userAgent: 'ua',
    userAgentHash: h('0'),
    expiresAt: later(30 * DAY),
    ...(mfaTimeStep !== undefined ? { mfa: { timeStep: mfaTimeStep } } : {}),
  },
  metadata: metadataAt(now),
});

t.test('MFA is enabled with the sealed secret and the time step of its first code, and its first recovery codes; not twice', async (t) => {
  const enable: UserCommand = {
    type: 'EnableMfa',
    data: { sealedSecret: 'v1.sealed', timeStep: 100, recoveryCodeDigests: digests },
    metadata: metadataAt(now),
  };
  given([registered]).when(enable).then(t, [mfaOn, codesIssued]);
  given([registered, mfaOn]).when(enable).thenRefused(t, 'MFA_ALREADY_ENABLED');
});

t.test('with MFA on, a session starts only with a TOTP code newer than the last one used', async (t) => {
  given([registered, mfaOn]).when(startWithCode('s2')).thenRefused(t, 'MFA_REQUIRED');
  given([registered, mfaOn])
    .when(startWithCode('s2', 100))
    .thenRefused(t, 'MFA_CODE_REUSED', /already used/);
  const [event] = given([registered, mfaOn]).when(startWithCode('s2', 101)).events();
  t.equal(event?.type === 'SessionStarted' && event.data.mfaTimeStep, 101, 'the session records the code’s time step');
  const used = given([registered, mfaOn, event!]);
  used.when(startWithCode('s3', 101)).thenRefused(t, 'MFA_CODE_REUSED', undefined);
  t.equal(used.when(startWithCode('s3', 102)).events().length, 1);
});

t.test('without MFA a session records no time step', async (t) => {
  const [event] = given([registered]).when(startWithCode('s2', 7)).events();
  t.equal(event?.type === 'SessionStarted' && event.data.mfaTimeStep, undefined);
});

t.test('MFA is disabled only with a fresh code, and only when on', async (t) => {
  const disable = (timeStep: number): UserCommand => ({ type: 'DisableMfa', data: { timeStep }, metadata: metadataAt(now) });
  given([registered]).when(disable(200)).thenRefused(t, 'MFA_NOT_ENABLED');
  given([registered, mfaOn]).when(disable(100)).thenRefused(t, 'MFA_CODE_REUSED');
  const off: UserEvent = { type: 'MfaDisabled', data: { userId, timeStep: 101, disabledAt: now.toISOString() } };
  given([registered, mfaOn]).when(disable(101)).then(t, [off]);
  const after = given([registered, mfaOn, off]).state;
  t.equal(after.status === 'registered' && after.mfa, null, 'the secret is gone');
  t.equal(given([registered, mfaOn, off]).when(startWithCode('s2')).events().length, 1, 'sessions start without a code again');
});

t.test('a social account is linked once; another account of the provider replaces it', async (t) => {
  const link = (subject: string): UserCommand => ({
    type: 'LinkSocialAccount',
    data: { provider: 'GOOGLE', subject, email: 'ann@example.com' },
    metadata: metadataAt(now),
  });
  const linked: UserEvent = {
    type: 'SocialAccountLinked',
    data: { userId, provider: 'GOOGLE', subject: 'g-1', email: 'ann@example.com', linkedAt: now.toISOString() },
  };
  given([registered]).when(link('g-1')).then(t, [linked]);
  given([registered, linked]).when(link('g-1')).then(t, []);
  given([registered, linked])
    .when(link('g-2'))
    .then(t, [{ ...linked, data: { ...linked.data, subject: 'g-2' } } as UserEvent]);
  given([]).when(link('g-1')).thenRefused(t, 'USER_NOT_FOUND');
});
