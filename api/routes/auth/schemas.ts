import { z } from 'zod';
import { usernameSchema } from '../../../domain/user/fields.ts';

const token = z.string().min(1).max(4096);

export const usernameQuery = z.object({ username: z.string().min(1, 'username is required') });

export const lookupBody = z.object({
  email: z.string().trim().email().max(254),
  recaptcha: z.string().max(4096).optional(),
  fingerprint: z.string().min(1).max(512),
  username: usernameSchema.optional(),
  receiveMarketingOffers: z.boolean().optional(),
  agreedToTerms: z.boolean().optional(),
  promoCode: z.string().max(64).optional(),
  referralCode: z.string().max(64).optional(),
  referrerUsername: z.string().max(64).optional(),
  referrerUserId: z.string().max(64).optional(),
});

export const verifyBody = z.object({
  email: z.string().trim().email().max(254),
  code: z.string().regex(/^\d{6}$/, 'must be the 6-digit code'),
  recaptcha: z.string().max(4096).optional(),
});

export const refreshTokenBody = z.object({ refreshToken: token });

export const tokensSchema = z.object({ accessToken: z.string(), refreshToken: z.string() });
/** The login result: the session's tokens, or (MFA on) only the token POST /api/auth/mfa/verify takes. */
const sessionStarted = z.object({ tokens: tokensSchema, mfaRequired: z.literal(false) });
const mfaChallenge = z.object({ tokens: z.object({ mfaAccessToken: z.string() }), mfaRequired: z.literal(true) });
export const loginResult = z.discriminatedUnion('mfaRequired', [sessionStarted, mfaChallenge]);

/** A path of the portal (never another origin): `/`, then no second `/` or `\\` at the start. */
const redirectPath = z
  .string()
  .max(512)
  .regex(/^\/(?![/\\])[^\s\\]*$/, 'must be a path of the portal, starting with a single /');

export const socialUrlBody = z.object({
  type: z.string().min(1).max(32),
  fingerprint: z.string().min(1).max(512),
  redirectPath: redirectPath.optional(),
  receiveMarketingOffers: z.boolean().optional(),
  promoCode: z.string().max(64).optional(),
  referrerUsername: z.string().max(64).optional(),
  referrerUserId: z.string().max(64).optional(),
});
export const socialUrlResult = z.object({ url: z.string(), state: z.string(), expiresAt: z.string() });

export const socialVerifyBody = z.object({
  state: z.string().min(1, 'state is required').max(512),
  code: z.string().min(1, 'code is required').max(2048),
  /** the callback's `iss` parameter (RFC 9207), passed on when the provider sent one */
  iss: z.string().url().max(512).optional(),
});
/** The login result, with the portal path given at the start (`redirectPath`) when there was one. */
const landing = { redirectPath: z.string().optional() };
export const socialLoginResult = z.discriminatedUnion('mfaRequired', [sessionStarted.extend(landing), mfaChallenge.extend(landing)]);

const totpCode = z.string().regex(/^\d{6}$/, 'must be the 6-digit code of the authenticator app');
/** A recovery code as shown (`xxxxx-xxxxx`), in any case, with or without the dash. */
export const recoveryCodeInput = z
  .string()
  .trim()
  .regex(/^[A-Za-z2-7]{5}-?[A-Za-z2-7]{5}$/, 'must be a recovery code: 10 letters and digits (2 to 7), as xxxxx-xxxxx');
export const mfaVerifyBody = z
  .object({
    mfaAccessToken: z.string().min(1).max(256),
    code: totpCode.optional().describe('the TOTP code; or else'),
    recoveryCode: recoveryCodeInput.optional().describe('one of the recovery codes shown when MFA was turned on (each works once)'),
  })
  .refine((b) => (b.code === undefined) !== (b.recoveryCode === undefined), 'give exactly one of code and recoveryCode');
export const mfaCodeBody = z.object({ code: totpCode });
export const lookupResult = z.object({
  isNewUser: z.boolean(),
  nextRequestAt: z.string(),
  codeSentTo: z.string(),
  codeExpiresAt: z.string(),
});
