import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { invariant, refuse } from '../shared/errors.ts';
import type { Role, SignupFields, SocialProvider, Tier, UserEvent } from './events.ts';
import { disableMfa, enableMfa, replaceRecoveryCodes, resetMfa, secondFactorOf, type MfaCommand, type SecondFactor } from './mfa.ts';
import { chooseGuideAgent, pinAgent, replaceInterests, unpinAgent, type ProfileCommand } from './profile.ts';
import { sameDigest } from './secret-compare.ts';
import { userStream } from './fields.ts';
import { evolve, initialState, type RegisteredUser, type SessionState, type UserState } from './state.ts';

export type UserCommand =
  | Command<'RegisterUser', { userId: string; email: string; username: string; isAdminEmail: boolean; languageCode?: string; signup: SignupFields }>
  | Command<'UpdateProfile', { avatarFilename?: string; languageCode?: string; virtualWalletMode?: boolean; username?: string }>
  | Command<'GrantRole', { role: Exclude<Role, 'user'>; reason: string }>
  | Command<'SetTier', { tier: Tier }>
  | Command<
      'StartSession',
      {
        sessionId: string;
        refreshTokenHash: string;
        userAgent: string;
        userAgentHash: string;
        expiresAt: Date;
        /** the second factor the caller checked: required while the user has MFA on */
        mfa?: SecondFactor;
      }
    >
  | Command<'RefreshSession', { refreshTokenHash: string; userAgentHash: string }>
  | Command<'EndSession', { refreshTokenHash: string }>
  /** an administrator (the actor) ends every session of the user: an account believed taken over */
  | Command<'EndAllSessions', Record<string, never>>
  | Command<'LinkSocialAccount', { provider: SocialProvider; subject: string; email: string }>
  | MfaCommand
  | ProfileCommand;

export const DEFAULT_TIER = 'free';
export const DEFAULT_LANGUAGE = 'en';

export function decide(command: UserCommand, state: UserState): UserEvent[] {
  if (command.type === 'RegisterUser') return register(command, state);
  if (state.status !== 'registered') {
    // A refresh token or sign-out naming an unknown user reveals nothing: same answer as a bad token.
    if (command.type === 'RefreshSession') throw refuse('INVALID_REFRESH_TOKEN', 'invalid or expired refresh token');
    if (command.type === 'EndSession') return [];
    throw refuse('USER_NOT_FOUND', 'user not found');
  }
  switch (command.type) {
    case 'UpdateProfile':
      return updateProfile(command, state);
    case 'SetTier':
      return state.tier === command.data.tier
        ? []
        : [
            {
              type: 'TierChanged',
              data: { userId: state.userId, tier: command.data.tier, previousTier: state.tier, changedAt: command.metadata.now.toISOString() },
            },
          ];
    case 'GrantRole':
      return grantRole(command, state);
    case 'StartSession':
      return startSession(command, state);
    case 'RefreshSession':
      return refreshSession(command, state);
    case 'EndSession':
      return endSession(command, state);
    case 'EndAllSessions':
      return Object.entries(state.sessions)
        .filter(([, session]) => !session.ended && Date.parse(session.expiresAt) > command.metadata.now.getTime())
        .map(([sessionId]) => ({
          type: 'SessionEnded',
          data: { userId: state.userId, sessionId, reason: 'ended_by_admin', endedAt: command.metadata.now.toISOString() },
        }));
    case 'LinkSocialAccount':
      return linkSocialAccount(command, state);
    case 'EnableMfa':
      return enableMfa(command, state);
    case 'DisableMfa':
      return disableMfa(command, state);
    case 'ReplaceRecoveryCodes':
      return replaceRecoveryCodes(command, state);
    case 'ResetMfa':
      return resetMfa(command, state);
    case 'ChooseGuideAgent':
      return chooseGuideAgent(command, state);
    case 'ReplaceInterests':
      return replaceInterests(command, state);
    case 'PinAgent':
      return pinAgent(command, state);
    case 'UnpinAgent':
      return unpinAgent(command, state);
    default:
      return assertNever(command);
  }
}

type Cmd<T extends UserCommand['type']> = Extract<UserCommand, { type: T }>;

function register({ data, metadata: { now } }: Cmd<'RegisterUser'>, state: UserState): UserEvent[] {
  if (state.status === 'registered') {
    // The same email registering twice (two verifies racing) is one registration.
    if (state.email === data.email) return [];
    throw refuse('ALREADY_EXISTS', 'user id already taken');
  }
  return [
    {
      type: 'UserRegistered',
      data: {
        userId: data.userId,
        email: data.email,
        username: data.username,
        role: data.isAdminEmail ? 'admin' : 'user',
        tier: DEFAULT_TIER,
        virtualWalletMode: true,
        languageCode: data.languageCode ?? DEFAULT_LANGUAGE,
        registeredAt: now.toISOString(),
        signup: data.signup,
      },
    },
  ];
}

function updateProfile({ data, metadata: { now } }: Cmd<'UpdateProfile'>, state: RegisteredUser): UserEvent[] {
  const at = now.toISOString();
  const events: UserEvent[] = [];
  if (data.username !== undefined && data.username !== state.username) {
    events.push({
      type: 'UsernameChanged',
      data: { userId: state.userId, username: data.username, previousUsername: state.username, changedAt: at },
    });
  }
  const changes = {
    ...(data.avatarFilename !== undefined && data.avatarFilename !== state.avatarFilename ? { avatarFilename: data.avatarFilename } : {}),
    ...(data.languageCode !== undefined && data.languageCode !== state.languageCode ? { languageCode: data.languageCode } : {}),
    ...(data.virtualWalletMode !== undefined && data.virtualWalletMode !== state.virtualWalletMode ? { virtualWalletMode: data.virtualWalletMode } : {}),
  };
  if (Object.keys(changes).length > 0) {
    events.push({ type: 'UserProfileUpdated', data: { userId: state.userId, ...changes, updatedAt: at } });
  }
  return events;
}

const RANK: Record<Role, number> = { user: 0, developer: 1, admin: 2 };

/** Roles only go up: listing an agent never takes an administrator's role away. */
function grantRole({ data, metadata: { now } }: Cmd<'GrantRole'>, state: RegisteredUser): UserEvent[] {
  if (RANK[data.role] <= RANK[state.role]) return [];
  return [
    {
      type: 'RoleGranted',
      data: { userId: state.userId, role: data.role, previousRole: state.role, reason: data.reason, grantedAt: now.toISOString() },
    },
  ];
}

/** A session of a user with MFA on starts only with a second factor (domain/user/mfa.ts). */
function startSession({ data, metadata: { now } }: Cmd<'StartSession'>, state: RegisteredUser): UserEvent[] {
  if (state.sessions[data.sessionId]) throw refuse('ALREADY_EXISTS', 'session already exists');
  invariant(data.expiresAt > now, 'a session must expire in the future');
  const { spent, mfaTimeStep } = secondFactorOf(state, data.sessionId, data.mfa, now.toISOString());
  return [
    ...spent,
    {
      type: 'SessionStarted',
      data: {
        userId: state.userId,
        sessionId: data.sessionId,
        refreshTokenHash: data.refreshTokenHash,
        userAgent: data.userAgent,
        userAgentHash: data.userAgentHash,
        startedAt: now.toISOString(),
        expiresAt: data.expiresAt.toISOString(),
        ...(mfaTimeStep !== undefined ? { mfaTimeStep } : {}),
      },
    },
  ];
}

/**
 * The session a presented token hash belongs to, and whether it is the session's token (`current`)
 * or one a refresh rotated away before refreshes kept the token (docs/decisions.md, "Auth: refresh
 * keeps the token").
 */
export function findSession(state: RegisteredUser, tokenHash: string): { sessionId: string; session: SessionState; current: boolean } | undefined {
  let found: { sessionId: string; session: SessionState; current: boolean } | undefined;
  // Every session is compared (no early exit), so timing does not tell which one matched.
  for (const [sessionId, session] of Object.entries(state.sessions)) {
    const current = sameDigest(session.refreshTokenHash, tokenHash);
    const rotated = session.rotatedHashes.reduce((seen, h) => sameDigest(h, tokenHash) || seen, false);
    if (current || rotated) found = { sessionId, session, current };
  }
  return found;
}

/**
 * A refresh keeps the session's token and its term (from the sign-in): a client that keeps the
 * token it got at sign-in, as the API specification allows, stays signed in until the term ends.
 * What protects a stolen token is the user agent binding, the fixed term, sign-out and an
 * administrator's revoke, not rotation.
 */
function refreshSession({ data, metadata: { now } }: Cmd<'RefreshSession'>, state: RegisteredUser): UserEvent[] {
  const found = findSession(state, data.refreshTokenHash);
  const invalid = refuse('INVALID_REFRESH_TOKEN', 'invalid or expired refresh token');
  if (!found || found.session.ended) throw invalid;
  // A token rotated away under the former rule is a copy that outlived its use (refreshes no longer
  // rotate, so no client of today holds one): the session ends, as the former reuse detection did.
  if (!found.current) {
    return [{ type: 'SessionEnded', data: { userId: state.userId, sessionId: found.sessionId, reason: 'refresh_token_reused', endedAt: now.toISOString() } }];
  }
  if (new Date(found.session.expiresAt) <= now) throw invalid;
  if (!sameDigest(found.session.userAgentHash, data.userAgentHash)) throw invalid;
  return [
    {
      type: 'SessionRefreshed',
      data: {
        userId: state.userId,
        sessionId: found.sessionId,
        refreshTokenHash: found.session.refreshTokenHash,
        refreshedAt: now.toISOString(),
        expiresAt: found.session.expiresAt,
      },
    },
  ];
}

/** Sign-out is idempotent: an unknown or ended session changes nothing. */
function endSession({ data, metadata: { now } }: Cmd<'EndSession'>, state: RegisteredUser): UserEvent[] {
  const found = findSession(state, data.refreshTokenHash);
  if (!found || found.session.ended) return [];
  return [
    {
      type: 'SessionEnded',
      data: { userId: state.userId, sessionId: found.sessionId, reason: 'signed_out', endedAt: now.toISOString() },
    },
  ];
}

/** The same provider account again changes nothing; another account of the provider replaces the link. */
function linkSocialAccount({ data, metadata: { now } }: Cmd<'LinkSocialAccount'>, state: RegisteredUser): UserEvent[] {
  if (state.social[data.provider]?.subject === data.subject) return [];
  return [
    {
      type: 'SocialAccountLinked',
      data: { userId: state.userId, provider: data.provider, subject: data.subject, email: data.email, linkedAt: now.toISOString() },
    },
  ];
}

export const userDecider: Aggregate<UserCommand, UserState, UserEvent> = { streamOf: userStream, initialState, evolve, decide };
