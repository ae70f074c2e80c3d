import type { CommandContext } from '../handle.ts';
import { usernameKey } from '../../domain/user/fields.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import { handleUser, loadUser, releaseUsername, reserveUsername } from './streams.ts';

export interface ProfileChanges {
  avatarFilename?: string;
  languageCode?: string;
  username?: string;
  virtualWalletMode?: boolean;
}

/**
 * PATCH /api/v1/users/me. A new username is reserved first (400 when another user holds it) and
 * the old one released after the change, so no moment exists where two users hold one name.
 */
export async function updateProfile(store: EventStore, userId: string, changes: ProfileChanges, ctx: CommandContext) {
  const before = await loadUser(store, userId);
  const previous = before.status === 'registered' ? before.username : undefined;
  const renamed = changes.username !== undefined && previous !== undefined && usernameKey(changes.username) !== usernameKey(previous);
  if (renamed) await reserveUsername(store, changes.username!, userId, ctx);
  try {
    const result = await handleUser(store, userId, (now) => ({ type: 'UpdateProfile', data: changes, now }), ctx);
    if (renamed) await releaseUsername(store, previous!, userId, ctx);
    return result;
  } catch (err) {
    if (renamed) await releaseUsername(store, changes.username!, userId, ctx);
    throw err;
  }
}
