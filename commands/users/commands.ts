// The users area's commands (sign-in, sessions, MFA, profile, roles): their data and results. No
// handler here.
import type { PendingSignup } from './login-codes.ts';
import type { Role, SocialProvider as ProviderType, Tier } from '../../domain/user/events.ts';

type Nothing = Record<string, never>;

export interface LookupData {
  email: string;
  signup: PendingSignup;
  /** the client's address (request.ip): lookups are throttled per address too */
  clientAddress: string;
}

export interface LookupResult {
  isNewUser: boolean;
  /** when the next code may be asked for */
  nextRequestAt: string;
  /** the address, masked, the code went to */
  codeSentTo: string;
  codeExpiresAt: string;
}

export interface GrantRoleData {
  /** the user, by id or by email */
  user: { userId: string } | { email: string };
  role: Exclude<Role, 'user'>;
  /** why: `admin_grant` (the CLI) or `agent_listed` */
  reason: string;
}

export interface RefreshData {
  refreshToken: string;
  userAgent: string;
}

export interface StartedSession {
  userId: string;
  sessionId: string;
  refreshToken: string;
}

/** A sign-in's outcome: a session, or (MFA on) the token that completes it with a TOTP code or a recovery code. */
export type SignInOutcome = { mfaRequired: false; session: StartedSession } | { mfaRequired: true; mfaAccessToken: string };

export interface VerifyCodeData {
  email: string;
  code: string;
  userAgent: string;
  /** the client's address (request.ip): wrong codes are counted per address too */
  clientAddress: string;
}

export interface StartSocialLoginData {
  provider: ProviderType;
  signup: PendingSignup;
  /** where the portal takes the user once signed in; handed back by verify */
  redirectPath?: string;
}

export interface SocialLoginStart {
  /** the provider's authorization URL the browser goes to */
  url: string;
  /** the signed state, also in the URL: the provider sends it back, verify needs it */
  state: string;
  expiresAt: string;
}

export interface VerifySocialLoginData {
  state: string;
  code: string;
  /** the callback's `iss` (RFC 9207), when the client passes it on */
  iss?: string;
  userAgent: string;
}

export type SocialSignIn = SignInOutcome & { redirectPath?: string };

export interface MfaEnrolment {
  /** the Base32 secret, shown this once */
  secret: string;
  otpauthUri: string;
  /** the first code must confirm the enrolment before this */
  expiresAt: string;
}

/** A new set of recovery codes, as shown this once (`xxxxx-xxxxx`). */
export interface RecoveryCodes {
  recoveryCodes: string[];
}

export interface CompleteMfaData {
  mfaAccessToken: string;
  /** a TOTP code; or else */
  code?: string;
  /** an unused recovery code: exactly one of the two */
  recoveryCode?: string;
  userAgent: string;
}

export interface ProfileChanges {
  avatarFilename?: string;
  languageCode?: string;
  username?: string;
  virtualWalletMode?: boolean;
}

export interface PinData {
  userId: string;
  agentId: string;
}

export interface PinsResult {
  pinnedAgentIds: string[];
  /** false when the agent was already pinned (or not pinned, for an unpin): nothing was recorded */
  changed: boolean;
}

/** The users area's commands: each one's data and result. */
export interface UserCommands {
  Lookup: { data: LookupData; result: LookupResult };
  VerifyCode: { data: VerifyCodeData; result: SignInOutcome };
  StartSocialLogin: { data: StartSocialLoginData; result: SocialLoginStart };
  VerifySocialLogin: { data: VerifySocialLoginData; result: SocialSignIn };
  EnrolMfa: { data: { userId: string; sessionId: string }; result: MfaEnrolment };
  ConfirmMfa: { data: { userId: string; code: string }; result: RecoveryCodes };
  DisableMfa: { data: { userId: string; code: string }; result: Nothing };
  ReplaceRecoveryCodes: { data: { userId: string; code: string }; result: RecoveryCodes };
  ResetMfa: { data: { userId: string }; result: { userId: string; mfaEnabled: false } };
  CompleteMfaSignIn: { data: CompleteMfaData; result: StartedSession };
  RefreshSession: { data: RefreshData; result: StartedSession | null };
  SignOut: { data: { refreshToken: string }; result: Nothing };
  EndAllSessions: { data: { userId: string }; result: { userId: string; sessionsEnded: number } };
  UpdateProfile: { data: { userId: string; changes: ProfileChanges }; result: Nothing };
  ChooseGuideAgent: { data: { userId: string; guideAgentId: string }; result: Nothing };
  ReplaceInterests: { data: { userId: string; interests: string[] }; result: Nothing };
  PinAgent: { data: PinData; result: PinsResult };
  UnpinAgent: { data: PinData; result: PinsResult };
  GrantRole: { data: GrantRoleData; result: { granted: boolean } };
  SetTier: { data: { userId: string; tier: Tier }; result: { userId: string; tier: Tier } };
}
