// Roles only go up: listing an agent makes a developer, `npm run admin:grant` an administrator.
// Administrators set a user's rate-limit tier.
import type { Command } from '../../domain/shared/decider.ts';
import type { Tier } from '../../domain/user/events.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { normalizeEmail } from '../../domain/user/fields.ts';
import { userIdForEmail } from '../../infra/tokens.ts';
import type { Tools } from '../tools.ts';
import type { GrantRoleData } from './commands.ts';

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
