import type { CommandContext } from '../handle.ts';
import { normalizeEmail } from '../../domain/user/fields.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import { userIdForEmail } from '../../infra/tokens.ts';
import { handleUser } from './streams.ts';

/**
 * A user who lists an agent becomes a developer. Idempotent, and never lowers a role: an
 * administrator stays one. 404 for an unknown user.
 */
export function becomeDeveloper(store: EventStore, userId: string, ctx: CommandContext) {
  return handleUser(store, userId, (now) => ({ type: 'GrantRole', data: { role: 'developer', reason: 'agent_listed' }, now }), ctx);
}

/** `npm run admin:grant -- <email>`: 404 for an email that never registered; idempotent. */
export function grantAdmin(store: EventStore, email: string, ctx: CommandContext) {
  const userId = userIdForEmail(normalizeEmail(email));
  return handleUser(store, userId, (now) => ({ type: 'GrantRole', data: { role: 'admin', reason: 'admin_grant' }, now }), ctx);
}
