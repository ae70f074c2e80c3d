// POST /api/api-keys and DELETE /api/api-keys/{id}: the owner (the command's actor) creates a key
// within their role and the caller's own scopes, or revokes one of theirs. The key and its signing
// secret are made here, answered once, and only their hash and sealed form are recorded. A creation
// first takes a place in the owner's key registry (domain/apikey/registry.ts), where the cap is decided.
import { apiKeyDecider } from '../../domain/apikey/decide.ts';
import { apiKeyRegistryDecider, type KeyFact, type RegisterApiKey } from '../../domain/apikey/registry.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { hashApiKey, keyEncryptionKeyOf, newKeyMaterial, sealSigningSecret } from '../../infra/api-keys.ts';
import type { Tools } from '../tools.ts';
import type { CreateApiKeyData, CreatedApiKey } from './commands.ts';

/**
 * What the registry decides on: the keys it holds (or, before it opens, the owner's earlier keys)
 * as their own streams say, revoked, active or not recorded.
 */
async function registration(tools: Tools, ownerId: string, priorKeyIds: readonly string[]): Promise<Pick<RegisterApiKey['data'], 'prior' | 'facts'>> {
  const { state: registry } = await tools.load(apiKeyRegistryDecider, ownerId);
  const ids = registry.opened ? [...registry.held.keys()] : priorKeyIds;
  const keys = await Promise.all(ids.map(async (keyId) => ({ keyId, state: (await tools.load(apiKeyDecider, keyId)).state })));
  const facts: Record<string, KeyFact> = {};
  for (const { keyId, state } of keys) facts[keyId] = !state.key ? 'unrecorded' : state.revokedAt ? 'revoked' : 'active';
  const prior = keys.flatMap(({ state: { key, revokedAt } }) =>
    !registry.opened && key && !revokedAt && key.ownerId === ownerId ? [{ keyId: key.keyId, expiresAt: key.expiresAt, createdAt: key.createdAt }] : [],
  );
  return { prior, facts };
}

export async function createApiKey({ data }: Command<'CreateApiKey', CreateApiKeyData>, tools: Tools): Promise<CreatedApiKey> {
  const kek = keyEncryptionKeyOf(tools.deps.config);
  const material = newKeyMaterial(tools.deps.ids);
  const keyId = tools.deps.ids.uuid();
  const asked = {
    ownerRole: data.ownerRole,
    callerScopes: data.callerScopes,
    name: data.name,
    type: data.type ?? 'platform',
    ...(data.scopes ? { scopes: data.scopes } : {}),
    ...(data.expiresAt ? { expiresAt: data.expiresAt } : {}),
  };
  const { ownerId } = data;
  const known = await registration(tools, ownerId, data.priorKeyIds);
  await tools.execute(apiKeyRegistryDecider, ownerId, { type: 'RegisterApiKey', data: { ownerId, keyId, key: asked, ...known } });
  const { state } = await tools.execute(apiKeyDecider, keyId, {
    type: 'CreateApiKey',
    data: {
      keyId,
      ownerId,
      ...asked,
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
