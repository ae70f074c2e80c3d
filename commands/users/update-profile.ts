import type { CommandContext } from '../handle.ts';
import { usernameKey } from '../../domain/user/fields.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import { handleUser, handleUsername, loadUser } from './streams.ts';

export interface ProfileChanges {
  avatarFilename?: string;
  languageCode?: string;
  username?: string;
  virtualWalletMode?: boolean;
}

/**
 * PATCH /api/v1/users/me. A new username is reserved first (400 when another user holds it), so no
 * moment exists where two users hold one name; names the user no longer holds are released after.
 * Which name to release comes from the event actually appended, not from the state read before:
 * UpdateProfile may retry on a concurrent rename, and the name it renamed from is then another.
 */
export async function updateProfile(store: EventStore, userId: string, changes: ProfileChanges, ctx: CommandContext) {
  const before = await loadUser(store, userId);
  const wanted = changes.username;
  const reserved = wanted !== undefined && before.status === 'registered' && usernameKey(wanted) !== usernameKey(before.username);
  if (reserved) await handleUsername(store, 'ReserveUsername', wanted, userId, ctx);
  try {
    const result = await handleUser(store, userId, (now) => ({ type: 'UpdateProfile', data: changes, now }), ctx);
    const renamed = result.events.find((e) => e.type === 'UsernameChanged');
    await releaseUnheld(store, userId, [renamed?.data.previousUsername, reserved ? wanted : undefined], ctx);
    return result;
  } catch (err) {
    if (reserved) await releaseUnheld(store, userId, [wanted], ctx);
    throw err;
  }
}

/**
 * Releases each name the user does not hold now. "Now" is the latest user state, read after the
 * append: a concurrent rename may already have moved the user on (or back to one of these names).
 */
async function releaseUnheld(store: EventStore, userId: string, names: Array<string | undefined>, ctx: CommandContext) {
  const latest = await loadUser(store, userId);
  const held = latest.status === 'registered' ? usernameKey(latest.username) : undefined;
  const release = new Map(names.filter((n): n is string => n !== undefined && usernameKey(n) !== held).map((n) => [usernameKey(n), n]));
  for (const name of release.values()) await handleUsername(store, 'ReleaseUsername', name, userId, ctx);
}
