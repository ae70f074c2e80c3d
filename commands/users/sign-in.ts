// POST /api/auth/verify: consumes the emailed code, registers a new user, and starts a session (or,
// for a user with MFA on, issues the mfaAccessToken that POST /api/auth/mfa/verify completes).
import type { Command } from '../../domain/shared/decider.ts';
import { DomainError } from '../../domain/shared/errors.ts';
import { userDecider } from '../../domain/user/decide.ts';
import type { SecondFactor } from '../../domain/user/mfa.ts';
import { normalizeEmail } from '../../domain/user/fields.ts';
import { usernameDecider } from '../../domain/user/username.ts';
import { deriveKey } from '../../infra/secrets.ts';
import { clientAddressDigest, newRefreshToken, sha256Hex, userIdForEmail } from '../../infra/tokens.ts';
import type { Tools } from '../tools.ts';
import { consumeCode, type PendingSignup } from './login-codes.ts';
import { issueMfaToken } from './mfa-store.ts';
import type { StartedSession, SignInOutcome, VerifyCodeData } from './commands.ts';

const USER_AGENT_MAX = 512;
const DAY_MS = 86_400_000;

/** When a refresh token issued at `now` stops working (a refresh keeps the term). */
export const sessionExpiry = (now: Date, ttlDays: number) => new Date(now.getTime() + ttlDays * DAY_MS);

export const userAgentHash = (userAgent: string) => sha256Hex(userAgent);

export async function verifyCode({ data, metadata }: Command<'VerifyCode', VerifyCodeData>, tools: Tools): Promise<SignInOutcome> {
  const { redis, config } = tools.deps;
  const email = normalizeEmail(data.email);
  const userId = userIdForEmail(email);
  const addressDigest = clientAddressDigest(config.JWT_SECRET, data.clientAddress);
  const { signup } = await consumeCode(redis, deriveKey(config.JWT_SECRET, 'login-code'), { userId, code: data.code, addressDigest }, metadata.now);
  if ((await tools.load(userDecider, userId)).state.status === 'unregistered') {
    await register(tools, { userId, email, signup: signup ?? {} });
  }
  return signInOrChallenge(tools, userId, data.userAgent);
}

/**
 * The last step of every sign-in (emailed code, social): a session, or for a user with MFA on an
 * mfaAccessToken. Should MFA be turned on meanwhile, the session's decision refuses (MFA_REQUIRED).
 */
export async function signInOrChallenge(tools: Tools, userId: string, userAgent: string): Promise<SignInOutcome> {
  const { state } = await tools.load(userDecider, userId);
  if (state.status === 'registered' && state.mfa) {
    const mfaAccessToken = `mfa_${tools.deps.ids.token(32)}`;
    await issueMfaToken(tools.deps.redis, userId, mfaAccessToken, tools.deps.config.MFA_TOKEN_TTL_SECONDS);
    return { mfaRequired: true, mfaAccessToken };
  }
  return { mfaRequired: false, session: await startSession(tools, userId, userAgent) };
}

/**
 * Registers a new user under the username it asked for (or one derived from its id). The
 * registration is decided before the username is reserved, so a refused one holds no name; the
 * reservation is idempotent for the same user, so a registration whose append then fails (the
 * store went away) is completed by the next sign-in of the email, which finds the name its own.
 */
export async function register(tools: Tools, input: { userId: string; email: string; signup: PendingSignup }) {
  const { username: wanted, ...signup } = input.signup;
  const isAdminEmail = tools.deps.config.ADMIN_EMAILS.includes(input.email);
  const registration = (username: string) =>
    ({ type: 'RegisterUser', data: { userId: input.userId, email: input.email, username, isAdminEmail, signup } }) as const;
  await tools.preview(userDecider, input.userId, registration(wanted ?? usernameCandidates(input.userId)[0]!));
  const username = await claimUsername(tools, input.userId, wanted);
  const result = await tools.execute(userDecider, input.userId, registration(username));
  // A concurrent verify registered this email first, maybe under another name: free ours.
  if (result.state.status === 'registered' && result.state.username !== username) {
    await tools.execute(usernameDecider, username, { type: 'ReleaseUsername', data: { username, userId: input.userId } });
  }
}

/** The usernames derived from a user id, shortest first. */
function usernameCandidates(userId: string): string[] {
  const hex = userId.replace(/-/g, '');
  return [`user_${hex.slice(0, 10)}`, `user_${hex.slice(0, 20)}`, `user_${hex}`];
}

/**
 * The username a new user asked for, or one derived from the user id when none was given or the
 * wanted one was taken between lookup and verify (the user can change it later).
 */
async function claimUsername(tools: Tools, userId: string, wanted: string | undefined): Promise<string> {
  for (const username of [...(wanted ? [wanted] : []), ...usernameCandidates(userId)]) {
    try {
      await tools.execute(usernameDecider, username, { type: 'ReserveUsername', data: { username, userId } });
      return username;
    } catch (err) {
      if (!(err instanceof DomainError) || err.reason !== 'USERNAME_TAKEN') throw err;
    }
  }
  throw new Error('no free username could be derived from the user id');
}

export async function startSession(tools: Tools, userId: string, userAgent: string, mfa?: SecondFactor): Promise<StartedSession> {
  const { ids, config } = tools.deps;
  const sessionId = ids.uuid();
  const refreshToken = newRefreshToken(userId, ids);
  await tools.execute(userDecider, userId, {
    type: 'StartSession',
    data: {
      sessionId,
      refreshTokenHash: sha256Hex(refreshToken),
      userAgent: userAgent.slice(0, USER_AGENT_MAX),
      userAgentHash: userAgentHash(userAgent),
      expiresAt: sessionExpiry(tools.metadata.now, config.REFRESH_TOKEN_TTL_DAYS),
      ...(mfa ? { mfa } : {}),
    },
  });
  return { userId, sessionId, refreshToken };
}
