// POST /api/auth/lookup: mails a login code to a registered email, or a registration code
// (keeping the signup fields until the code is verified) to a new one.
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { assertStorable } from '../../domain/shared/storable-text.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { normalizeEmail } from '../../domain/user/fields.ts';
import { usernameDecider } from '../../domain/user/username.ts';
import { deriveKey } from '../../infra/secrets.ts';
import { clientAddressDigest, userIdForEmail } from '../../infra/tokens.ts';
import type { Tools } from '../tools.ts';
import { assertNotLocked, storeCode, takeAddressSlot, takeLookupSlot } from './login-codes.ts';
import type { LookupData, LookupResult } from './commands.ts';

const CODE_DIGITS = 6;

export async function lookup({ data, metadata }: Command<'Lookup', LookupData>, tools: Tools): Promise<LookupResult> {
  const { redis, mailer, config, ids } = tools.deps;
  const email = normalizeEmail(data.email);
  const userId = userIdForEmail(email);
  // The signup fields are recorded at verify, once the code is spent: refused now if they could not be.
  assertStorable(data.signup);
  await takeAddressSlot(redis, clientAddressDigest(config.JWT_SECRET, data.clientAddress), config.LOOKUP_PER_ADDRESS_PER_HOUR, metadata.now);
  await assertNotLocked(redis, userId, metadata.now);
  const isNewUser = (await tools.load(userDecider, userId)).state.status === 'unregistered';
  const username = data.signup.username;
  if (isNewUser && username) {
    const { owner } = (await tools.load(usernameDecider, username)).state;
    if (owner !== null && owner !== userId) throw refuse('USERNAME_TAKEN', 'username is already taken');
  }
  const { nextRequestAt } = await takeLookupSlot(redis, userId, metadata.now);
  const code = ids.digits(CODE_DIGITS);
  const ttl = config.LOGIN_CODE_TTL_SECONDS;
  await storeCode(redis, deriveKey(config.JWT_SECRET, 'login-code'), userId, code, ttl, isNewUser ? data.signup : undefined);
  await mailer.send(codeMail(email, code, ttl, isNewUser));
  return {
    isNewUser,
    nextRequestAt,
    codeSentTo: maskEmail(email),
    codeExpiresAt: new Date(metadata.now.getTime() + ttl * 1000).toISOString(),
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
