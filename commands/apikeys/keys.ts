// POST /api/api-keys and DELETE /api/api-keys/{id}: the owner (the command's actor) creates a key
// within their role and the caller's own scopes, or revokes one of theirs. The key and its signing
// secret are made here, answered once, and only their hash and sealed form are recorded.
import { apiKeyDecider } from '../../domain/apikey/decide.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { hashApiKey, keyEncryptionKeyOf, newKeyMaterial, sealSigningSecret } from '../../infra/api-keys.ts';
import type { Tools } from '../tools.ts';
import type { CreateApiKeyData, CreatedApiKey } from './commands.ts';

export async function createApiKey({ data }: Command<'CreateApiKey', CreateApiKeyData>, tools: Tools): Promise<CreatedApiKey> {
  const kek = keyEncryptionKeyOf(tools.deps.config);
  const material = newKeyMaterial(tools.deps.ids);
  const keyId = tools.deps.ids.uuid();
  const { state } = await tools.execute(apiKeyDecider, keyId, {
    type: 'CreateApiKey',
    data: {
      keyId,
      ownerId: data.ownerId,
      ownerRole: data.ownerRole,
      callerScopes: data.callerScopes,
      name: data.name,
      type: data.type ?? 'platform',
      ...(data.scopes ? { scopes: data.scopes } : {}),
      ...(data.expiresAt ? { expiresAt: data.expiresAt } : {}),
      keyHash: hashApiKey(material.apiKey, kek),
      sealedSecret: sealSigningSecret(material.secretKey, kek),
      prefix: material.prefix,
    },
  });
  return { key: state.key!, apiKey: material.apiKey, secretKey: material.secretKey };
}

export async function revokeApiKey({ data }: Command<'RevokeApiKey', { keyId: string; ownerId: string }>, tools: Tools): Promise<{ revokedAt: string }> {
  const { state } = await tools.execute(apiKeyDecider, data.keyId, { type: 'RevokeApiKey', data: { ownerId: data.ownerId } });
  return { revokedAt: state.revokedAt! };
}
