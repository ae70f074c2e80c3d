import { assertNever } from '../shared/decider.ts';
import { badRequest } from '../shared/errors.ts';
import type { UsernameEvent } from './events.ts';

// A `username-{lowercased}` stream holds who owns a username: appending to it with the expected
// revision makes two users claiming the same name at once impossible, with no read model involved.

export type UsernameState = { owner: string | null };

export type UsernameCommand =
  | { type: 'ReserveUsername'; data: { username: string; userId: string }; now: Date }
  | { type: 'ReleaseUsername'; data: { username: string; userId: string }; now: Date };

export const initialUsernameState = (): UsernameState => ({ owner: null });

export function evolveUsername(state: UsernameState, event: UsernameEvent): UsernameState {
  switch (event.type) {
    case 'UsernameReserved':
      return { owner: event.data.userId };
    case 'UsernameReleased':
      return state.owner === event.data.userId ? { owner: null } : state;
    default:
      return assertNever(event);
  }
}

export function decideUsername(command: UsernameCommand, state: UsernameState): UsernameEvent[] {
  const { username, userId } = command.data;
  const at = command.now.toISOString();
  switch (command.type) {
    case 'ReserveUsername':
      if (state.owner === userId) return [];
      if (state.owner !== null) throw badRequest('username is already taken');
      return [{ type: 'UsernameReserved', data: { username, userId, reservedAt: at } }];
    case 'ReleaseUsername':
      if (state.owner !== userId) return [];
      return [{ type: 'UsernameReleased', data: { username, userId, releasedAt: at } }];
    default:
      return assertNever(command);
  }
}
