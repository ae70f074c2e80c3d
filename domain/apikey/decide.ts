// An API key: created once by its owner with scopes within the owner's role (and within the
// creating key's own scopes when a key creates one), revoked once. Only `platform` keys are made
// through the API.
import { resolveScopes, defaultScopesOf, type Scope } from '../access/scopes.ts';
import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { refuse } from '../shared/errors.ts';
import type { Role } from '../user/events.ts';
import type { ApiKeyCreated, ApiKeyEvent, ApiKeyType } from './events.ts';

export const apiKeyStream = (keyId: string): string => `apikey-${keyId}`;

export interface ApiKeyState {
  readonly key: ApiKeyCreated | null;
  readonly revokedAt: string | null;
}

export const MAX_KEY_NAME = 100;
/**
 * Active keys a user may hold: each key has a rate budget of its owner's tier, so without a bound a
 * free user would multiply the tier by making keys. Decided on the owner's key registry stream
 * (domain/apikey/registry.ts), whose expected revision makes racing creations decide in turn.
 */
export const MAX_ACTIVE_KEYS = 10;

export type CreateApiKey = Command<
  'CreateApiKey',
  {
    keyId: string;
    ownerId: string;
    ownerRole: Role;
    /** what the caller holds: a key may only make keys within its own scopes */
    callerScopes: readonly Scope[];
    name: string;
    type: string;
    /** as asked for (canonical names, aliases, wildcards); absent: the role's defaults */
    scopes?: readonly string[];
    expiresAt?: string;
    keyHash: string;
    sealedSecret: string;
    prefix: string;
  }
>;
/** What a new key is asked with: what newKeyOf checks. */
export type NewKeyAsked = Pick<CreateApiKey['data'], 'name' | 'type' | 'scopes' | 'ownerRole' | 'callerScopes' | 'expiresAt'>;
export type RevokeApiKey = Command<'RevokeApiKey', { ownerId: string }>;
export type ApiKeyCommand = CreateApiKey | RevokeApiKey;

export const initialState = (): ApiKeyState => ({ key: null, revokedAt: null });

export function evolve(state: ApiKeyState, event: ApiKeyEvent): ApiKeyState {
  switch (event.type) {
    case 'ApiKeyCreated':
      return { ...state, key: event.data };
    case 'ApiKeyRevoked':
      return { ...state, revokedAt: event.data.revokedAt };
    default:
      return assertNever(event);
  }
}

/**
 * A new key's name and scopes as asked for, or the refusal: a name of 1 to MAX_KEY_NAME characters, a
 * platform key, scopes known and within the caller's, at least one, an expiry in the future. The
 * owner's key registry checks it too (domain/apikey/registry.ts), so a refused key takes no place.
 */
export function newKeyOf(data: NewKeyAsked, now: Date): { name: string; scopes: Scope[] } {
  const name = data.name.trim();
  if (name.length === 0 || name.length > MAX_KEY_NAME) throw refuse('VALIDATION_FAILED', `name must be 1 to ${MAX_KEY_NAME} characters`);
  if (data.type !== 'platform') {
    if (data.type === 'developer' || data.type === 'internal')
      throw refuse('KEY_TYPE_NOT_ALLOWED', `keys of type ${data.type} cannot be created through the API`);
    throw refuse('VALIDATION_FAILED', 'type must be platform');
  }
  let scopes: Scope[];
  if (data.scopes === undefined) scopes = defaultScopesOf(data.ownerRole).filter((s) => data.callerScopes.includes(s));
  else {
    const resolved = resolveScopes(data.scopes);
    if (resolved.unknown.length > 0) throw refuse('VALIDATION_FAILED', `scopes: unknown scope ${resolved.unknown.map((s) => JSON.stringify(s)).join(', ')}`);
    const beyond = resolved.scopes.filter((s) => !data.callerScopes.includes(s));
    if (beyond.length > 0) throw refuse('VALIDATION_FAILED', `scopes: ${beyond.join(', ')} ${beyond.length > 1 ? 'are' : 'is'} beyond what you may grant`);
    scopes = resolved.scopes;
  }
  if (scopes.length === 0) throw refuse('VALIDATION_FAILED', 'scopes: a key needs at least one scope');
  if (data.expiresAt !== undefined && Date.parse(data.expiresAt) <= now.getTime()) throw refuse('VALIDATION_FAILED', 'expiresAt must be in the future');
  return { name, scopes };
}

function create({ data, metadata }: CreateApiKey, state: ApiKeyState): ApiKeyEvent[] {
  if (state.key) throw refuse('ALREADY_EXISTS', `API key ${data.keyId} exists`);
  const { name, scopes } = newKeyOf(data, metadata.now);
  return [
    {
      type: 'ApiKeyCreated',
      data: {
        keyId: data.keyId,
        ownerId: data.ownerId,
        name,
        type: data.type as ApiKeyType,
        scopes,
        keyHash: data.keyHash,
        sealedSecret: data.sealedSecret,
        prefix: data.prefix,
        expiresAt: data.expiresAt ?? null,
        createdAt: metadata.now.toISOString(),
      },
    },
  ];
}

/** Only the owner revokes, once: an unknown, another user's or an already revoked key is not found. */
function revoke({ data, metadata }: RevokeApiKey, state: ApiKeyState): ApiKeyEvent[] {
  if (!state.key || state.key.ownerId !== data.ownerId || state.revokedAt) throw refuse('API_KEY_NOT_FOUND', 'no active API key with this id');
  return [{ type: 'ApiKeyRevoked', data: { keyId: state.key.keyId, revokedAt: metadata.now.toISOString() } }];
}

export function decide(command: ApiKeyCommand, state: ApiKeyState): ApiKeyEvent[] {
  switch (command.type) {
    case 'CreateApiKey':
      return create(command, state);
    case 'RevokeApiKey':
      return revoke(command, state);
    default:
      return assertNever(command);
  }
}

export const apiKeyDecider: Aggregate<ApiKeyCommand, ApiKeyState, ApiKeyEvent> = { streamOf: apiKeyStream, initialState, evolve, decide };
