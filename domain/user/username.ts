import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { refuse } from '../shared/errors.ts';
import type { UsernameEvent } from './events.ts';
import { usernameStream } from './fields.ts';

// A `username-{lowercased}` stream holds who owns a username: appending to it with the expected
// revision makes two users claiming the same name at once impossible, with no read model involved.

export type UsernameState = { owner: string | null };

export type UsernameCommand =
  | Command<'ReserveUsername', { username: string; userId: string }>
  | Command<'ReleaseUsername', { username: string; userId: string }>;

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
  const at = command.metadata.now.toISOString();
  switch (command.type) {
    case 'ReserveUsername':
      if (state.owner === userId) return [];
      if (state.owner !== null) throw refuse('USERNAME_TAKEN', 'username is already taken');
      return [{ type: 'UsernameReserved', data: { username, userId, reservedAt: at } }];
    case 'ReleaseUsername':
      if (state.owner !== userId) return [];
      return [{ type: 'UsernameReleased', data: { username, userId, releasedAt: at } }];
    default:
      return assertNever(command);
  }
}

export const usernameDecider: Aggregate<UsernameCommand, UsernameState, UsernameEvent> = {
  streamOf: usernameStream,
  initialState: initialUsernameState,
  evolve: evolveUsername,
  decide: decideUsername,
};
