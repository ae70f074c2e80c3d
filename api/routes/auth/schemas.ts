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
export const loginResult = z.object({ tokens: tokensSchema, mfaRequired: z.boolean() });
export const lookupResult = z.object({
  isNewUser: z.boolean(),
  nextRequestAt: z.string(),
  codeSentTo: z.string(),
  codeExpiresAt: z.string(),
});
