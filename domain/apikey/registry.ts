// The API keys a user holds, one stream per user (`apikeys-{ownerId}`): where the cap on active keys
// (MAX_ACTIVE_KEYS) is decided, as an agent's beta seats are on its seat shards. A creation registers
// its key here before the key's own stream (`apikey-{keyId}`) records it; the append's expected
// revision makes racing creations decide one after the other, so the 11th is refused however many
// arrive at once. Revocations and expiries are facts of the key streams: a key leaves the count at
// the next registration, when its stream says it is revoked, when it expired, or when its stream
// never recorded it (a creation that stopped between the two appends) UNRECORDED_GRACE_MS after.
// Keys made before the registry count too: its first decision opens it with them (docs/decisions.md).
import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { refuse } from '../shared/errors.ts';
import { MAX_ACTIVE_KEYS, newKeyOf, type NewKeyAsked } from './decide.ts';
import type { ApiKeyRegistryEvent, RegisteredKey } from './events.ts';

export const apiKeyRegistryStream = (ownerId: string): string => `apikeys-${ownerId}`;

/** Longer than any creation between its two appends: a key its stream has not recorded by then never will be. */
export const UNRECORDED_GRACE_MS = 60_000;

export interface ApiKeyRegistryState {
  readonly opened: boolean;
  /** the keys holding a place, by id */
  readonly held: ReadonlyMap<string, RegisteredKey>;
}

/** What a key's own stream says of it, read by the command; a key it did not read counts as held. */
export type KeyFact = 'active' | 'revoked' | 'unrecorded';

export type RegisterApiKey = Command<
  'RegisterApiKey',
  {
    ownerId: string;
    keyId: string;
    key: NewKeyAsked;
    /** the owner's active keys made before the registry, from their streams: used once, when it opens */
    prior: ReadonlyArray<{ keyId: string; expiresAt: string | null; createdAt: string }>;
    facts: Readonly<Record<string, KeyFact>>;
  }
>;
export type ApiKeyRegistryCommand = RegisterApiKey;

export const initialState = (): ApiKeyRegistryState => ({ opened: false, held: new Map() });

export function evolve(state: ApiKeyRegistryState, event: ApiKeyRegistryEvent): ApiKeyRegistryState {
  const held = new Map(state.held);
  switch (event.type) {
    case 'ApiKeyRegistryOpened':
      for (const key of event.data.keys) held.set(key.keyId, key);
      return { opened: true, held };
    case 'ApiKeyRegistered':
      held.set(event.data.keyId, event.data);
      return { ...state, held };
    case 'ApiKeyLapsed':
      held.delete(event.data.keyId);
      return { ...state, held };
    default:
      return assertNever(event);
  }
}

const expired = (expiresAt: string | null, now: Date): boolean => expiresAt !== null && Date.parse(expiresAt) <= now.getTime();

/** Why a held key no longer counts at `now`, or null while it does. */
function lapseOf(key: RegisteredKey, fact: KeyFact | undefined, now: Date): 'revoked' | 'expired' | 'unrecorded' | null {
  if (fact === 'revoked') return 'revoked';
  if (expired(key.expiresAt, now)) return 'expired';
  if (fact === 'unrecorded' && Date.parse(key.registeredAt) + UNRECORDED_GRACE_MS <= now.getTime()) return 'unrecorded';
  return null;
}

/** A place for a new key: the keys that lapsed leave, then the 11th active one is refused, then the key itself is checked. */
function register({ data, metadata }: RegisterApiKey, state: ApiKeyRegistryState): ApiKeyRegistryEvent[] {
  const at = metadata.now.toISOString();
  if (state.held.has(data.keyId)) return [];
  const prior = data.prior
    .filter((k) => !expired(k.expiresAt, metadata.now))
    .map((k) => ({ keyId: k.keyId, expiresAt: k.expiresAt, registeredAt: k.createdAt }));
  const opening: ApiKeyRegistryEvent[] = state.opened ? [] : [{ type: 'ApiKeyRegistryOpened', data: { ownerId: data.ownerId, keys: prior, at } }];
  const { held } = opening.reduce(evolve, state);
  const lapsed = [...held.values()].flatMap((key): ApiKeyRegistryEvent[] => {
    const why = lapseOf(key, data.facts[key.keyId], metadata.now);
    return why ? [{ type: 'ApiKeyLapsed', data: { keyId: key.keyId, why, at } }] : [];
  });
  if (held.size - lapsed.length >= MAX_ACTIVE_KEYS) {
    throw refuse('API_KEY_LIMIT_REACHED', `at most ${MAX_ACTIVE_KEYS} active API keys: revoke one before creating another`, { maxActiveKeys: MAX_ACTIVE_KEYS });
  }
  newKeyOf(data.key, metadata.now);
  return [...opening, ...lapsed, { type: 'ApiKeyRegistered', data: { keyId: data.keyId, expiresAt: data.key.expiresAt ?? null, registeredAt: at } }];
}

export function decide(command: ApiKeyRegistryCommand, state: ApiKeyRegistryState): ApiKeyRegistryEvent[] {
  switch (command.type) {
    case 'RegisterApiKey':
      return register(command, state);
    default:
      return assertNever(command.type);
  }
}

export const apiKeyRegistryDecider: Aggregate<ApiKeyRegistryCommand, ApiKeyRegistryState, ApiKeyRegistryEvent> = {
  streamOf: apiKeyRegistryStream,
  initialState,
  evolve,
  decide,
};
