import { assertNever } from '../shared/decider.ts';
import type { Role, SocialProvider, UserEvent } from './events.ts';

export interface SessionState {
  refreshTokenHash: string;
  /**
   * hashes of tokens a refresh rotated away before refreshes kept the token: still the session's
   * (docs/decisions.md, "Auth: refresh keeps the token"); empty for sessions started since
   */
  rotatedHashes: string[];
  userAgentHash: string;
  /** when the user signed in (a refresh does not change it) */
  startedAt: string;
  expiresAt: string;
  ended: boolean;
}

export interface MfaState {
  sealedSecret: string;
  enabledAt: string;
  /** the newest time step whose code was used: a code of it or an older one is a replay */
  lastTimeStep: number;
  /** the digests of the current set of recovery codes, in the order issued; null where a code is spent */
  recoveryCodes: Array<string | null>;
}

export interface SocialLink {
  subject: string;
  email: string;
  linkedAt: string;
}

export type UserState =
  | { status: 'unregistered' }
  | {
      status: 'registered';
      userId: string;
      email: string;
      username: string;
      role: Role;
      tier: string;
      languageCode: string;
      virtualWalletMode: boolean;
      avatarFilename?: string;
      sessions: Record<string, SessionState>;
      /** TOTP, when on */
      mfa: MfaState | null;
      social: Partial<Record<SocialProvider, SocialLink>>;
      /** the agent picked as guide, when one was */
      guideAgentId?: string;
      interests: string[];
      /** in the order they were pinned */
      pinnedAgentIds: string[];
    };

export type RegisteredUser = Extract<UserState, { status: 'registered' }>;

export const initialState = (): UserState => ({ status: 'unregistered' });

export function evolve(state: UserState, event: UserEvent): UserState {
  if (event.type === 'UserRegistered') {
    const d = event.data;
    return {
      status: 'registered',
      userId: d.userId,
      email: d.email,
      username: d.username,
      role: d.role,
      tier: d.tier,
      languageCode: d.languageCode,
      virtualWalletMode: d.virtualWalletMode,
      sessions: {},
      mfa: null,
      social: {},
      interests: [],
      pinnedAgentIds: [],
    };
  }
  if (state.status !== 'registered') return state;
  return evolveRegistered(state, event);
}

function evolveRegistered(state: RegisteredUser, event: Exclude<UserEvent, { type: 'UserRegistered' }>): UserState {
  switch (event.type) {
    case 'UserProfileUpdated': {
      const { avatarFilename, languageCode, virtualWalletMode } = event.data;
      return {
        ...state,
        ...(avatarFilename !== undefined ? { avatarFilename } : {}),
        ...(languageCode !== undefined ? { languageCode } : {}),
        ...(virtualWalletMode !== undefined ? { virtualWalletMode } : {}),
      };
    }
    case 'UsernameChanged':
      return { ...state, username: event.data.username };
    case 'RoleGranted':
      return { ...state, role: event.data.role };
    case 'TierChanged':
      return { ...state, tier: event.data.tier };
    case 'SessionStarted': {
      const d = event.data;
      const session: SessionState = {
        refreshTokenHash: d.refreshTokenHash,
        rotatedHashes: [],
        userAgentHash: d.userAgentHash,
        startedAt: d.startedAt,
        expiresAt: d.expiresAt,
        ended: false,
      };
      const mfa = state.mfa && d.mfaTimeStep !== undefined ? { ...state.mfa, lastTimeStep: d.mfaTimeStep } : state.mfa;
      return { ...state, mfa, sessions: { ...state.sessions, [d.sessionId]: session } };
    }
    case 'SessionRefreshed': {
      const d = event.data;
      // A refresh now keeps the token; one recorded by the former rotation replaced it.
      return withSession(state, d.sessionId, (s) =>
        s.refreshTokenHash === d.refreshTokenHash
          ? { ...s, expiresAt: d.expiresAt }
          : { ...s, refreshTokenHash: d.refreshTokenHash, rotatedHashes: [...s.rotatedHashes, s.refreshTokenHash], expiresAt: d.expiresAt },
      );
    }
    case 'SessionEnded':
      return withSession(state, event.data.sessionId, (s) => ({ ...s, ended: true }));
    case 'SocialAccountLinked': {
      const { provider, subject, email, linkedAt } = event.data;
      return { ...state, social: { ...state.social, [provider]: { subject, email, linkedAt } } };
    }
    case 'MfaEnabled': {
      const { sealedSecret, enabledAt, timeStep } = event.data;
      return { ...state, mfa: { sealedSecret, enabledAt, lastTimeStep: timeStep, recoveryCodes: [] } };
    }
    case 'MfaRecoveryCodesIssued': {
      const { codeDigests, timeStep } = event.data;
      return withMfa(state, (mfa) => ({ ...mfa, lastTimeStep: timeStep, recoveryCodes: codeDigests }));
    }
    case 'MfaRecoveryCodeUsed': {
      const { index } = event.data;
      return withMfa(state, (mfa) => ({ ...mfa, recoveryCodes: mfa.recoveryCodes.map((digest, i) => (i === index ? null : digest)) }));
    }
    // Turning MFA off, by the user or by an administrator, drops the secret and the recovery codes.
    case 'MfaDisabled':
    case 'MfaReset':
      return { ...state, mfa: null };
    case 'GuideAgentChosen':
      return { ...state, guideAgentId: event.data.guideAgentId };
    case 'InterestsReplaced':
      return { ...state, interests: event.data.interests };
    case 'AgentPinned':
      return { ...state, pinnedAgentIds: [...state.pinnedAgentIds, event.data.agentId] };
    case 'AgentUnpinned':
      return { ...state, pinnedAgentIds: state.pinnedAgentIds.filter((id) => id !== event.data.agentId) };
    default:
      return assertNever(event);
  }
}

function withMfa(state: RegisteredUser, change: (mfa: MfaState) => MfaState): UserState {
  return state.mfa ? { ...state, mfa: change(state.mfa) } : state;
}

function withSession(state: RegisteredUser, id: string, change: (s: SessionState) => SessionState): UserState {
  const session = state.sessions[id];
  return session ? { ...state, sessions: { ...state.sessions, [id]: change(session) } } : state;
}
