import type { CommandContext, Folder, HandleResult } from '../handle.ts';
import { handle, load } from '../handle.ts';
import { decide, type UserCommand } from '../../domain/user/decide.ts';
import type { UserEvent, UsernameEvent } from '../../domain/user/events.ts';
import { userStream, usernameStream } from '../../domain/user/fields.ts';
import { evolve, initialState, type UserState } from '../../domain/user/state.ts';
import { decideUsername, evolveUsername, initialUsernameState, type UsernameCommand, type UsernameState } from '../../domain/user/username.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';

export const userFolder: Folder<UserState, UserEvent> = { initialState, evolve };
export const usernameFolder: Folder<UsernameState, UsernameEvent> = {
  initialState: initialUsernameState,
  evolve: evolveUsername,
};

/** Runs one user command against `user-{userId}`; the command's time is the context's. */
export function handleUser(
  store: EventStore,
  userId: string,
  command: (now: Date) => UserCommand,
  ctx: CommandContext,
): Promise<HandleResult<UserState, UserEvent>> {
  return handle(store, userStream(userId), userFolder, (state) => decide(command(ctx.now), state), ctx);
}

export async function loadUser(store: EventStore, userId: string): Promise<UserState> {
  return (await load(store, userStream(userId), userFolder)).state;
}

/**
 * Runs one command against the reservation stream of `username`: ReserveUsername claims it (400
 * when another user holds it, nothing when this user does), ReleaseUsername frees it (nothing when
 * this user does not hold it).
 */
export function handleUsername(
  store: EventStore,
  type: UsernameCommand['type'],
  username: string,
  userId: string,
  ctx: CommandContext,
): Promise<HandleResult<UsernameState, UsernameEvent>> {
  const command: UsernameCommand = { type, data: { username, userId }, now: ctx.now };
  return handle(store, usernameStream(username), usernameFolder, (state) => decideUsername(command, state), ctx);
}

/** Who holds `username` now, from its reservation stream (authoritative, unlike the read model). */
export async function usernameOwner(store: EventStore, username: string): Promise<string | null> {
  return (await load(store, usernameStream(username), usernameFolder)).state.owner;
}
