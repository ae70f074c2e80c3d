// The users area's handlers, one per command of users/commands.ts.
import type { Handlers } from '../tools.ts';
import type { UserCommands } from './commands.ts';
import { lookup } from './lookup.ts';
import { completeMfaSignIn, confirmMfa, disableMfa, enrolMfa, replaceRecoveryCodes, resetMfa } from './mfa.ts';
import { chooseGuideAgent, pinAgent, replaceInterests, unpinAgent } from './profile.ts';
import { grantRole, setTier } from './roles.ts';
import { endAllSessions, refreshSession, signOut } from './sessions.ts';
import { verifyCode } from './sign-in.ts';
import { startSocialLogin, verifySocialLogin } from './social.ts';
import { updateProfile } from './update-profile.ts';

export const usersHandlers: Handlers<UserCommands> = {
  Lookup: lookup,
  VerifyCode: verifyCode,
  StartSocialLogin: startSocialLogin,
  VerifySocialLogin: verifySocialLogin,
  EnrolMfa: enrolMfa,
  ConfirmMfa: confirmMfa,
  DisableMfa: disableMfa,
  ReplaceRecoveryCodes: replaceRecoveryCodes,
  ResetMfa: resetMfa,
  CompleteMfaSignIn: completeMfaSignIn,
  RefreshSession: refreshSession,
  SignOut: signOut,
  EndAllSessions: endAllSessions,
  UpdateProfile: updateProfile,
  ChooseGuideAgent: chooseGuideAgent,
  ReplaceInterests: replaceInterests,
  PinAgent: pinAgent,
  UnpinAgent: unpinAgent,
  GrantRole: grantRole,
  SetTier: setTier,
};
