// POST /api/auth/refresh and POST /api/auth/sign-out.
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { newRefreshToken, refreshTokenUserId, sha256Hex } from '../../infra/tokens.ts';
import type { Tools } from '../dispatch.ts';
import { sessionExpiry, userAgentHash, type StartedSession } from './sign-in.ts';

export interface RefreshData {
  refreshToken: string;
  userAgent: string;
}

/**
 * Rotates the refresh token of a live session used from the user agent it was issued to. A token
 * already rotated away ends its session (it was copied): the result is then `{ session: null }`,
 * a refusal that was recorded, so the caller answers 401 once the read models show the end.
 */
export async function refreshSession(
  { data, metadata }: Command<'RefreshSession', RefreshData>,
  tools: Tools,
): Promise<{ session: StartedSession | null }> {
  const userId = refreshTokenUserId(data.refreshToken);
  if (!userId) throw refuse('INVALID_REFRESH_TOKEN', 'invalid or expired refresh token');
  const refreshToken = newRefreshToken(userId, tools.deps.ids);
  const result = await tools.execute(userDecider, userId, {
    type: 'RefreshSession',
    data: {
      refreshTokenHash: sha256Hex(data.refreshToken),
      userAgentHash: userAgentHash(data.userAgent),
      newRefreshTokenHash: sha256Hex(refreshToken),
      expiresAt: sessionExpiry(metadata.now, tools.deps.config.REFRESH_TOKEN_TTL_DAYS),
    },
  });
  const event = result.events[0];
  if (event?.type !== 'SessionRefreshed') return { session: null };
  return { session: { userId, sessionId: event.data.sessionId, refreshToken } };
}

/** Ends the token's session; unknown or ended tokens change nothing. */
export async function signOut({ data }: Command<'SignOut', { refreshToken: string }>, tools: Tools): Promise<Record<string, never>> {
  const userId = refreshTokenUserId(data.refreshToken);
  if (userId) await tools.execute(userDecider, userId, { type: 'EndSession', data: { refreshTokenHash: sha256Hex(data.refreshToken) } });
  return {};
}

/** An administrator ends every live session of a user (an account believed taken over): its access and refresh tokens stop working. */
export async function endAllSessions({ data }: Command<'EndAllSessions', { userId: string }>, tools: Tools): Promise<{ userId: string; sessionsEnded: number }> {
  const { events } = await tools.execute(userDecider, data.userId, { type: 'EndAllSessions', data: {} });
  return { userId: data.userId, sessionsEnded: events.length };
}
