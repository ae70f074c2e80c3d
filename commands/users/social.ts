// POST /api/auth/social/url and POST /api/auth/social/verify: sign-in through the social identity
// provider (OpenID Connect code flow with PKCE and a nonce). The state handed to the browser is
// signed, and its record (nonce, PKCE verifier, signup fields) waits in Redis, sealed, for one verify.
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { assertStorable } from '../../domain/shared/storable-text.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { normalizeEmail } from '../../domain/user/fields.ts';
import { sameDigest } from '../../domain/user/secret-compare.ts';
import { decryptSecret, deriveKey, encryptSecret } from '../../infra/secrets.ts';
import { SocialProviderError, type SocialProvider } from '../../infra/social.ts';
import { hmacHex, userIdForEmail } from '../../infra/tokens.ts';
import type { Tools } from '../tools.ts';
import { pendingSignupSchema } from './login-codes.ts';
import { register, signInOrChallenge } from './sign-in.ts';
import type { StartSocialLoginData, SocialLoginStart, VerifySocialLoginData, SocialSignIn } from './commands.ts';

const STATE_PURPOSE = 'social-login-state';
const STATE = /^([A-Za-z0-9_-]{43})\.([0-9a-f]{64})$/;

const stateRecord = z.object({
  provider: z.literal('GOOGLE'),
  nonce: z.string(),
  codeVerifier: z.string(),
  signup: pendingSignupSchema,
  redirectPath: z.string().optional(),
  expiresAt: z.string(),
});

const stateKey = (id: string) => `auth:social-state:${id}`;
const signatureOf = (key: Buffer, id: string) => hmacHex(key, `state:${id}`);

function providerOf(tools: Tools): SocialProvider {
  if (!tools.deps.social) throw refuse('SOCIAL_LOGIN_DISABLED', 'social login is not configured on this deployment');
  return tools.deps.social;
}

function refusalOf(err: unknown): unknown {
  if (!(err instanceof SocialProviderError)) return err;
  return err.kind === 'unavailable'
    ? refuse('IDENTITY_PROVIDER_UNAVAILABLE', 'the identity provider does not answer: retry later')
    : refuse('SOCIAL_LOGIN_FAILED', 'the identity provider refused the code, or its answer did not verify: start again');
}

export async function startSocialLogin({ data, metadata }: Command<'StartSocialLogin', StartSocialLoginData>, tools: Tools): Promise<SocialLoginStart> {
  const social = providerOf(tools);
  // The signup fields are recorded at verify, once the provider's code is spent: refused now if they could not be.
  assertStorable(data.signup);
  const { ids, redis, config } = tools.deps;
  const id = ids.token(32);
  const state = `${id}.${signatureOf(deriveKey(config.JWT_SECRET, STATE_PURPOSE), id)}`;
  const nonce = ids.token(32);
  const codeVerifier = ids.token(32); // 43 characters of base64url: a valid RFC 7636 verifier
  const url = await social.authorizationUrl({ state, nonce, codeVerifier }).catch((err: unknown) => Promise.reject(refusalOf(err)));
  const expiresAt = new Date(metadata.now.getTime() + config.SOCIAL_STATE_TTL_SECONDS * 1000).toISOString();
  const record: z.infer<typeof stateRecord> = {
    provider: data.provider,
    nonce,
    codeVerifier,
    signup: data.signup,
    expiresAt,
    ...(data.redirectPath ? { redirectPath: data.redirectPath } : {}),
  };
  await redis.set(stateKey(id), encryptSecret(JSON.stringify(record), config.JWT_SECRET, STATE_PURPOSE), 'EX', config.SOCIAL_STATE_TTL_SECONDS);
  return { url, state, expiresAt };
}

/**
 * The state's record, taken out of Redis (single use: a second verify finds nothing). A state
 * whose signature does not verify is refused before Redis is asked.
 */
async function takeState(redis: Redis, jwtSecret: string, state: string, now: Date): Promise<z.infer<typeof stateRecord>> {
  const invalid = refuse('INVALID_STATE', 'invalid, expired or already used state: start again');
  const match = STATE.exec(state);
  if (!match || !sameDigest(match[2]!, signatureOf(deriveKey(jwtSecret, STATE_PURPOSE), match[1]!))) throw invalid;
  const sealed = await redis.getdel(stateKey(match[1]!));
  if (!sealed) throw invalid;
  let record: z.infer<typeof stateRecord>;
  try {
    record = stateRecord.parse(JSON.parse(decryptSecret(sealed, jwtSecret, STATE_PURPOSE)));
  } catch {
    throw invalid; // sealed under a master secret that has since changed
  }
  if (new Date(record.expiresAt) <= now) throw invalid;
  return record;
}

/**
 * Finds the user by the provider's verified email (registering a new one, with the signup fields
 * given at the start), links the provider account, and signs in as the emailed code does. What it
 * records has the user as actor.
 */
export async function verifySocialLogin({ data, metadata }: Command<'VerifySocialLogin', VerifySocialLoginData>, tools: Tools): Promise<SocialSignIn> {
  const social = providerOf(tools);
  const record = await takeState(tools.deps.redis, tools.deps.config.JWT_SECRET, data.state, metadata.now);
  const identity = await social
    .exchange({ code: data.code, state: data.state, ...(data.iss ? { iss: data.iss } : {}), nonce: record.nonce, codeVerifier: record.codeVerifier })
    .catch((err: unknown) => Promise.reject(refusalOf(err)));
  // The user id comes from the email: an address the provider did not verify could take over the
  // account of whoever owns it here.
  if (!identity.email || !identity.emailVerified) {
    throw refuse('SOCIAL_EMAIL_UNVERIFIED', 'the identity provider did not verify the account’s email: sign in with an emailed code instead');
  }
  const email = normalizeEmail(identity.email);
  const userId = userIdForEmail(email);
  const asUser = tools.as(userId);
  if ((await asUser.load(userDecider, userId)).state.status === 'unregistered') await register(asUser, { userId, email, signup: record.signup });
  await asUser.execute(userDecider, userId, { type: 'LinkSocialAccount', data: { provider: record.provider, subject: identity.subject, email } });
  const outcome = await signInOrChallenge(asUser, userId, data.userAgent);
  return { ...outcome, ...(record.redirectPath ? { redirectPath: record.redirectPath } : {}) };
}
