import { randomUUID } from 'node:crypto';
import type { CommandContext } from '../handle.ts';
import type { Position } from '../../infra/eventstore/port.ts';
import { DomainError } from '../../domain/shared/errors.ts';
import { normalizeEmail } from '../../domain/user/fields.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import { deriveKey } from '../../infra/secrets.ts';
import { newRefreshToken, sha256Hex, userIdForEmail } from '../../infra/tokens.ts';
import type { AuthDeps } from './deps.ts';
import { consumeCode, type PendingSignup } from './login-codes.ts';
import { handleUser, handleUsername, loadUser } from './streams.ts';

export interface StartedSession {
  userId: string;
  sessionId: string;
  refreshToken: string;
  position?: Position;
}

const USER_AGENT_MAX = 512;
const DAY_MS = 86_400_000;

/** When a refresh token issued (or rotated) at `now` stops working. */
export const sessionExpiry = (now: Date, ttlDays: number) => new Date(now.getTime() + ttlDays * DAY_MS);

export const userAgentHash = (userAgent: string) => sha256Hex(userAgent);

/** POST /api/auth/verify: consumes the code, registers a new user, and starts a session. */
export async function verifyCode(
  deps: AuthDeps,
  input: { email: string; code: string; userAgent: string },
  ctx: CommandContext,
): Promise<StartedSession> {
  const email = normalizeEmail(input.email);
  const userId = userIdForEmail(email);
  const { signup } = await consumeCode(deps.redis, deriveKey(deps.config.JWT_SECRET, 'login-code'), userId, input.code, ctx.now);
  const asUser = { ...ctx, actor: userId };
  if ((await loadUser(deps.store, userId)).status === 'unregistered') {
    await register(deps, { userId, email, signup: signup ?? {} }, asUser);
  }
  return startSession(deps.store, { userId, userAgent: input.userAgent, ttlDays: deps.config.REFRESH_TOKEN_TTL_DAYS }, asUser);
}

async function register(deps: AuthDeps, input: { userId: string; email: string; signup: PendingSignup }, ctx: CommandContext) {
  const { username: wanted, ...signup } = input.signup;
  const username = await claimUsername(deps.store, input.userId, wanted, ctx);
  const isAdminEmail = deps.config.ADMIN_EMAILS.includes(input.email);
  const result = await handleUser(
    deps.store,
    input.userId,
    (now) => ({ type: 'RegisterUser', data: { userId: input.userId, email: input.email, username, isAdminEmail, signup }, now }),
    ctx,
  );
  // A concurrent verify registered this email first, maybe under another name: free ours.
  if (result.state.status === 'registered' && result.state.username !== username) {
    await handleUsername(deps.store, 'ReleaseUsername', username, input.userId, ctx);
  }
}

/**
 * The username a new user asked for, or one derived from the user id when none was given or the
 * wanted one was taken between lookup and verify (the user can change it later).
 */
async function claimUsername(store: EventStore, userId: string, wanted: string | undefined, ctx: CommandContext): Promise<string> {
  const hex = userId.replace(/-/g, '');
  const candidates = [...(wanted ? [wanted] : []), `user_${hex.slice(0, 10)}`, `user_${hex.slice(0, 20)}`, `user_${hex}`];
  for (const candidate of candidates) {
    try {
      await handleUsername(store, 'ReserveUsername', candidate, userId, ctx);
      return candidate;
    } catch (err) {
      if (!(err instanceof DomainError) || err.kind !== 'BAD_REQUEST') throw err;
    }
  }
  throw new Error('no free username could be derived from the user id');
}

export async function startSession(
  store: EventStore,
  input: { userId: string; userAgent: string; ttlDays: number },
  ctx: CommandContext,
): Promise<StartedSession> {
  const sessionId = randomUUID();
  const refreshToken = newRefreshToken(input.userId);
  const result = await handleUser(
    store,
    input.userId,
    (now) => ({
      type: 'StartSession',
      data: {
        sessionId,
        refreshTokenHash: sha256Hex(refreshToken),
        userAgent: input.userAgent.slice(0, USER_AGENT_MAX),
        userAgentHash: userAgentHash(input.userAgent),
        expiresAt: sessionExpiry(now, input.ttlDays),
      },
      now,
    }),
    ctx,
  );
  return { userId: input.userId, sessionId, refreshToken, position: result.position };
}
