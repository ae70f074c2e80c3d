// The API keys area's commands (create, revoke): their data and results. No handler here.
import type { ApiKeyCreated } from '../../domain/apikey/events.ts';
import type { Scope } from '../../domain/access/scopes.ts';
import type { Role } from '../../domain/user/events.ts';

export interface CreateApiKeyData {
  ownerId: string;
  ownerRole: Role;
  callerScopes: readonly Scope[];
  name: string;
  type?: string;
  scopes?: readonly string[];
  expiresAt?: string;
  /** the owner's keys not revoked as the read model lists them: found by it, decided by their streams (used once, to open the registry) */
  priorKeyIds: readonly string[];
}

/** The creation's answer: the key's record and, this once, the key and its secret. */
export interface CreatedApiKey {
  key: ApiKeyCreated;
  apiKey: string;
  secretKey: string;
}

/** The apikeys area's commands: each one's data and result. */
export interface ApiKeyCommands {
  CreateApiKey: { data: CreateApiKeyData; result: CreatedApiKey };
  RevokeApiKey: { data: { keyId: string; ownerId: string }; result: { revokedAt: string } };
}
