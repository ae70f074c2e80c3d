// Facts of an API key's stream `apikey-{keyId}`: its creation (the key's hash and the sealed
// signing secret, never either in the clear) and its revocation.
import { z } from 'zod';
import { scopeSchema } from '../access/scopes.ts';

/** Types a key may have; only `platform` keys are created through the API. */
export const apiKeyTypes = ['platform', 'developer', 'internal'] as const;
export const apiKeyTypeSchema = z.enum(apiKeyTypes);
export type ApiKeyType = z.infer<typeof apiKeyTypeSchema>;

export const apiKeyCreatedSchema = z.object({
  keyId: z.string().min(1),
  ownerId: z.string().min(1),
  name: z.string().min(1),
  type: apiKeyTypeSchema,
  scopes: z.array(scopeSchema),
  /** HMAC-SHA256 of the key under a server key (infra/api-keys.ts): what a request's key is looked up by */
  keyHash: z.string().min(1),
  /** the signing secret sealed under KEY_ENCRYPTION_KEY (infra/secrets.ts) */
  sealedSecret: z.string().min(1),
  /** the key's first characters, to tell keys apart in a list */
  prefix: z.string().min(1),
  expiresAt: z.string().nullable(),
  createdAt: z.string(),
});
export type ApiKeyCreated = z.infer<typeof apiKeyCreatedSchema>;

export const apiKeyRevokedSchema = z.object({ keyId: z.string().min(1), revokedAt: z.string() });

export const apiKeyEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ApiKeyCreated'), data: apiKeyCreatedSchema }),
  z.object({ type: z.literal('ApiKeyRevoked'), data: apiKeyRevokedSchema }),
]);
export type ApiKeyEvent = z.infer<typeof apiKeyEventSchema>;
export const apiKeyEventTypes: ReadonlySet<string> = new Set(apiKeyEventSchema.options.map((o) => o.shape.type.value));
