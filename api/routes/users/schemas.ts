// The user routes' bodies and answers, in one place.
import { z } from 'zod';
import { avatarFilenameSchema, interestsSchema, languageCodeSchema, usernameSchema } from '../../../domain/user/fields.ts';
import { publicAgentRecord } from '../../../projections/agents/queries.ts';

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
/** A new set of recovery codes, answered this once: each completes one sign-in in place of a TOTP code. */
export const recoveryCodes = z.object({ recoveryCodes: z.array(z.string()) });
export const mfaConfirmed = mfaStatus.extend(recoveryCodes.shape);

export const guideAgentBody = z
  .object({ guideAgentId: z.string({ message: 'guideAgentId is required' }).trim().min(1, 'guideAgentId is required').max(100) })
  .strict();

export const interestsBody = z.object({ interests: interestsSchema }).strict();

/** The guide agent's record, as the agent listing answers it; null while none is picked (or it left the listing). */
export const guideAgentAnswer = publicAgentRecord.nullable();
