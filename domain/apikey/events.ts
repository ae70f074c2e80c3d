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

// Facts of a user's key registry `apikeys-{ownerId}` (domain/apikey/registry.ts): which keys hold a
// place under the cap on active keys. No key material: ids and expiries only.
const registeredKeySchema = z.object({ keyId: z.string().min(1), expiresAt: z.string().nullable(), registeredAt: z.string() });
export type RegisteredKey = z.infer<typeof registeredKeySchema>;

/** Why a key left the registry's count: revoked or expired on its own stream, or never recorded there. */
export const keyLapseSchema = z.enum(['revoked', 'expired', 'unrecorded']);

export const apiKeyRegistryEventSchema = z.discriminatedUnion('type', [
  /** the first decision on the registry: the owner's keys made before it, still active then */
  z.object({ type: z.literal('ApiKeyRegistryOpened'), data: z.object({ ownerId: z.string().min(1), keys: z.array(registeredKeySchema), at: z.string() }) }),
  z.object({ type: z.literal('ApiKeyRegistered'), data: registeredKeySchema }),
  z.object({ type: z.literal('ApiKeyLapsed'), data: z.object({ keyId: z.string().min(1), why: keyLapseSchema, at: z.string() }) }),
]);
export type ApiKeyRegistryEvent = z.infer<typeof apiKeyRegistryEventSchema>;
