// The user routes' bodies and answers, in one place.
import { z } from 'zod';
import { avatarFilenameSchema, languageCodeSchema, usernameSchema } from '../../../domain/user/fields.ts';

export const profilePatch = z
  .object({
    avatarFilename: avatarFilenameSchema.optional(),
    languageCode: languageCodeSchema.optional(),
    username: usernameSchema.optional(),
    virtualWalletMode: z.boolean().optional(),
  })
  .strict();

export const mfaEnrolment = z.object({ secret: z.string(), otpauthUri: z.string(), expiresAt: z.string() });
export const mfaStatus = z.object({ mfaEnabled: z.boolean() });
