// The API key routes' bodies and answers, in one place.
import { z } from 'zod';
import { MAX_KEY_NAME } from '../../../domain/apikey/decide.ts';
import { apiKeyItem } from '../../../projections/apikeys/queries.ts';

export const createKeyBody = z
  .object({
    name: z.string().trim().min(1, 'name is required').max(MAX_KEY_NAME, `name must be at most ${MAX_KEY_NAME} characters`),
    /** `platform` (the default); `developer` and `internal` are refused with 403 */
    type: z.string().min(1).max(40).optional(),
    /** scope names (canonical, legacy aliases or `prefix:*`); default: the caller's role's non-admin scopes */
    scopes: z.array(z.string().min(1).max(64)).min(1).max(50).optional(),
    expiresAt: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();

/** The creation's answer: the key's record, and this once its key and signing secret. */
export const createdKey = apiKeyItem.omit({ revokedAt: true, status: true }).extend({
  apiKey: z.string().describe('shown once: send it as x-api-key'),
  secretKey: z.string().describe('shown once: the HMAC key of x-signature'),
});

export const keyIdParams = z.object({ id: z.string().min(1).max(100) });
