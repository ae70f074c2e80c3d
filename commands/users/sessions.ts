import type { CommandContext } from '../handle.ts';
import { unauthorized } from '../../domain/shared/errors.ts';
import type { EventStore, Position } from '../../infra/eventstore/port.ts';
import { newRefreshToken, refreshTokenUserId, sha256Hex } from '../../infra/tokens.ts';
import { sessionExpiry, userAgentHash, type StartedSession } from './sign-in.ts';
import { handleUser } from './streams.ts';

/**
 * POST /api/auth/refresh: rotates the refresh token of a live session used from the user agent it
 * was issued to. A token already rotated away ends its session (it was copied) and answers 401.
 */
export async function refreshSession(
  store: EventStore,
  input: { refreshToken: string; userAgent: string; ttlDays: number },
  ctx: CommandContext,
  /** awaited before a refusal that ended the session, so the refusal's effect is visible to the next request */
  beforeRefusal: (position: Position | undefined) => Promise<void> = async () => {},
): Promise<StartedSession> {
  const userId = refreshTokenUserId(input.refreshToken);
  if (!userId) throw unauthorized('invalid or expired refresh token');
  const refreshToken = newRefreshToken(userId);
  const result = await handleUser(
    store,
    userId,
    (now) => ({
      type: 'RefreshSession',
      data: {
        refreshTokenHash: sha256Hex(input.refreshToken),
        userAgentHash: userAgentHash(input.userAgent),
        newRefreshTokenHash: sha256Hex(refreshToken),
        expiresAt: sessionExpiry(now, input.ttlDays),
      },
      now,
    }),
    { ...ctx, actor: userId },
  );
  const event = result.events[0];
  if (event?.type !== 'SessionRefreshed') {
    await beforeRefusal(result.position);
    throw unauthorized('invalid or expired refresh token');
  }
  return { userId, sessionId: event.data.sessionId, refreshToken, position: result.position };
}

/** POST /api/auth/sign-out: ends the token's session; unknown or ended tokens change nothing. */
export async function signOut(store: EventStore, refreshToken: string, ctx: CommandContext): Promise<{ position?: Position }> {
  const userId = refreshTokenUserId(refreshToken);
  if (!userId) return {};
  const result = await handleUser(
    store,
    userId,
    (now) => ({ type: 'EndSession', data: { refreshTokenHash: sha256Hex(refreshToken) }, now }),
    { ...ctx, actor: userId },
  );
  return { position: result.position };
}
