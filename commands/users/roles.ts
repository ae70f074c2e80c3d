// Roles only go up: listing an agent makes a developer, `npm run admin:grant` an administrator.
// Administrators set a user's rate-limit tier.
import type { Command } from '../../domain/shared/decider.ts';
import type { Role, Tier } from '../../domain/user/events.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { normalizeEmail } from '../../domain/user/fields.ts';
import { userIdForEmail } from '../../infra/tokens.ts';
import type { Tools } from '../dispatch.ts';

export interface GrantRoleData {
  /** the user, by id or by email */
  user: { userId: string } | { email: string };
  role: Exclude<Role, 'user'>;
  /** why: `admin_grant` (the CLI) or `agent_listed` */
  reason: string;
}

/** Idempotent, and never lowers a role (an administrator who lists an agent stays one). USER_NOT_FOUND for an unknown user. */
export async function grantRole({ data }: Command<'GrantRole', GrantRoleData>, tools: Tools): Promise<{ granted: boolean }> {
  const userId = 'userId' in data.user ? data.user.userId : userIdForEmail(normalizeEmail(data.user.email));
  const result = await tools.execute(userDecider, userId, { type: 'GrantRole', data: { role: data.role, reason: data.reason } });
  return { granted: result.events.length > 0 };
}

/** An administrator (the actor) sets a user's rate-limit tier; the same tier again records nothing. */
export async function setTier({ data }: Command<'SetTier', { userId: string; tier: Tier }>, tools: Tools): Promise<{ userId: string; tier: Tier }> {
  await tools.execute(userDecider, data.userId, { type: 'SetTier', data: { tier: data.tier } });
  return { userId: data.userId, tier: data.tier };
}
