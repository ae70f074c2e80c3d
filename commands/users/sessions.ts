// POST /api/auth/refresh and POST /api/auth/sign-out.
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { refreshTokenUserId, sha256Hex } from '../../infra/tokens.ts';
import type { Tools } from '../tools.ts';
import { userAgentHash } from './sign-in.ts';
import type { RefreshData, StartedSession } from './commands.ts';

/**
 * A new access token for a live session used from the user agent it was issued to. The refresh
 * token stays the same, with the term it got at sign-in (docs/decisions.md, "Auth: refresh keeps
 * the token"); anything else is INVALID_REFRESH_TOKEN.
 */
export async function refreshSession({ data }: Command<'RefreshSession', RefreshData>, tools: Tools): Promise<StartedSession | null> {
  const userId = refreshTokenUserId(data.refreshToken);
  if (!userId) throw refuse('INVALID_REFRESH_TOKEN', 'invalid or expired refresh token');
  const result = await tools.execute(userDecider, userId, {
    type: 'RefreshSession',
    data: { refreshTokenHash: sha256Hex(data.refreshToken), userAgentHash: userAgentHash(data.userAgent) },
  });
  const [event] = result.events;
  // A token rotated away under the former rule ended its session (recorded): null, and the route
  // is refused once that end is written.
  if (event?.type === 'SessionEnded') return null;
  if (event?.type !== 'SessionRefreshed') throw new Error('a refresh records SessionRefreshed or SessionEnded, or is refused');
  return { userId, sessionId: event.data.sessionId, refreshToken: data.refreshToken };
}

/** Ends the token's session; unknown or ended tokens change nothing. */
export async function signOut({ data }: Command<'SignOut', { refreshToken: string }>, tools: Tools): Promise<Record<string, never>> {
  const userId = refreshTokenUserId(data.refreshToken);
  if (userId) await tools.execute(userDecider, userId, { type: 'EndSession', data: { refreshTokenHash: sha256Hex(data.refreshToken) } });
  return {};
}

/** An administrator ends every live session of a user (an account believed taken over): its access and refresh tokens stop working. */
export async function endAllSessions(
  { data }: Command<'EndAllSessions', { userId: string }>,
  tools: Tools,
): Promise<{ userId: string; sessionsEnded: number }> {
  const { events } = await tools.execute(userDecider, data.userId, { type: 'EndAllSessions', data: {} });
  return { userId: data.userId, sessionsEnded: events.length };
}
