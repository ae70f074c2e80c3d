// PATCH /api/v1/users/me.
import type { Command } from '../../domain/shared/decider.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { usernameKey } from '../../domain/user/fields.ts';
import { usernameDecider } from '../../domain/user/username.ts';
import type { Tools } from '../tools.ts';
import type { ProfileChanges } from './commands.ts';

/**
 * A new username is reserved first (USERNAME_TAKEN when another user holds it), so no moment exists
 * where two users hold one name; names the user no longer holds are released after. Which name to
 * release comes from the event actually appended, not from the state read before: UpdateProfile
 * may be decided again behind a concurrent rename, and the name it renamed from is then another.
 */
export async function updateProfile(
  { data }: Command<'UpdateProfile', { userId: string; changes: ProfileChanges }>,
  tools: Tools,
): Promise<Record<string, never>> {
  const { userId, changes } = data;
  const before = (await tools.load(userDecider, userId)).state;
  const wanted = changes.username;
  const reserved = wanted !== undefined && before.status === 'registered' && usernameKey(wanted) !== usernameKey(before.username);
  if (reserved) await tools.execute(usernameDecider, wanted, { type: 'ReserveUsername', data: { username: wanted, userId } });
  try {
    const result = await tools.execute(userDecider, userId, { type: 'UpdateProfile', data: changes });
    const renamed = result.events.find((e) => e.type === 'UsernameChanged');
    await releaseUnheld(tools, userId, [renamed?.data.previousUsername, reserved ? wanted : undefined]);
    return {};
  } catch (err) {
    if (reserved) await releaseUnheld(tools, userId, [wanted]);
    throw err;
  }
}

/**
 * Releases each name the user does not hold now. "Now" is the latest user state, read after the
 * append: a concurrent rename may already have moved the user on (or back to one of these names).
 */
async function releaseUnheld(tools: Tools, userId: string, names: Array<string | undefined>) {
  const latest = (await tools.load(userDecider, userId)).state;
  const held = latest.status === 'registered' ? usernameKey(latest.username) : undefined;
  const release = new Map(names.filter((n): n is string => n !== undefined && usernameKey(n) !== held).map((n) => [usernameKey(n), n]));
  for (const username of release.values()) await tools.execute(usernameDecider, username, { type: 'ReleaseUsername', data: { username, userId } });
}
