import type { CommandContext } from '../handle.ts';
import { badRequest } from '../../domain/shared/errors.ts';
import { normalizeEmail } from '../../domain/user/fields.ts';
import { deriveKey } from '../../infra/secrets.ts';
import { newLoginCode, userIdForEmail } from '../../infra/tokens.ts';
import type { AuthDeps } from './deps.ts';
import { assertNotLocked, storeCode, takeLookupSlot, type PendingSignup } from './login-codes.ts';
import { loadUser, usernameOwner } from './streams.ts';

export interface LookupResult {
  isNewUser: boolean;
  /** when the next code may be asked for */
  nextRequestAt: string;
  /** the address, masked, the code went to */
  codeSentTo: string;
  codeExpiresAt: string;
}

/**
 * POST /api/auth/lookup: mails a login code to a registered email, or a registration code
 * (keeping the signup fields until the code is verified) to a new one.
 */
export async function lookup(deps: AuthDeps, input: { email: string; signup: PendingSignup }, ctx: CommandContext): Promise<LookupResult> {
  const email = normalizeEmail(input.email);
  const userId = userIdForEmail(email);
  await assertNotLocked(deps.redis, userId, ctx.now);
  const isNewUser = (await loadUser(deps.store, userId)).status === 'unregistered';
  const username = input.signup.username;
  if (isNewUser && username) {
    const owner = await usernameOwner(deps.store, username);
    if (owner !== null && owner !== userId) throw badRequest('username is already taken');
  }
  const { nextRequestAt } = await takeLookupSlot(deps.redis, userId, ctx.now);
  const code = newLoginCode();
  const ttl = deps.config.LOGIN_CODE_TTL_SECONDS;
  const key = deriveKey(deps.config.JWT_SECRET, 'login-code');
  await storeCode(deps.redis, key, userId, code, ttl, isNewUser ? input.signup : undefined);
  await deps.mailer.send(codeMail(email, code, ttl, isNewUser));
  return {
    isNewUser,
    nextRequestAt,
    codeSentTo: maskEmail(email),
    codeExpiresAt: new Date(ctx.now.getTime() + ttl * 1000).toISOString(),
  };
}

function codeMail(to: string, code: string, ttlSeconds: number, isNewUser: boolean) {
  const minutes = Math.max(1, Math.round(ttlSeconds / 60));
  const purpose = isNewUser ? 'registration' : 'sign-in';
  return {
    to,
    subject: `Your ${purpose} code`,
    text: [
      `Your ${purpose} code is ${code}`,
      '',
      `It expires in ${minutes} minute${minutes === 1 ? '' : 's'} and works once.`,
      'If you did not ask for it, ignore this mail: nobody can sign in without the code.',
    ].join('\n'),
  };
}

/** j***@example.com: enough for a user to recognise the address, not to harvest it. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  return `${local.slice(0, 1)}***${email.slice(at)}`;
}
