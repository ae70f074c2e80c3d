// The cap on active API keys, decided on the owner's key registry (domain/apikey/registry.ts):
// the 11th active key is refused; a key revoked, expired, or never recorded by its stream frees its
// place; keys made before the registry count from its opening.
import t from 'tap';
import type { ApiKeyRegistryEvent } from '../../../domain/apikey/events.ts';
import { apiKeyRegistryDecider, UNRECORDED_GRACE_MS, type KeyFact, type RegisterApiKey } from '../../../domain/apikey/registry.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const NOW = '2026-11-27T10:00:00.000Z';
const EARLIER = '2026-11-27T09:00:00.000Z';
const { given } = scenario(apiKeyRegistryDecider);
const asked = { ownerRole: 'user' as const, callerScopes: ['profile:read' as const], name: 'bot', type: 'platform' };

const register = (keyId: string, more: Partial<RegisterApiKey['data']> = {}, now = NOW): RegisterApiKey => ({
  type: 'RegisterApiKey',
  data: { ownerId: 'u1', keyId, key: asked, prior: [], facts: {}, ...more },
  metadata: at(now, 'u1'),
});
const opened = (keys: string[] = []): ApiKeyRegistryEvent => ({
  type: 'ApiKeyRegistryOpened',
  data: { ownerId: 'u1', keys: keys.map((keyId) => ({ keyId, expiresAt: null, registeredAt: EARLIER })), at: EARLIER },
});
const registered = (keyId: string, expiresAt: string | null = null, registeredAt = EARLIER): ApiKeyRegistryEvent => ({
  type: 'ApiKeyRegistered',
  data: { keyId, expiresAt, registeredAt },
});
const ten = Array.from({ length: 10 }, (_, i) => `k${i}`);
const full = [opened(), ...ten.map((k) => registered(k))];

t.test('the first registration opens the registry with the earlier keys still active, then registers its key', async (t) => {
  const prior = [
    { keyId: 'old-1', expiresAt: null, createdAt: EARLIER },
    { keyId: 'old-2', expiresAt: '2026-11-27T09:30:00.000Z', createdAt: EARLIER },
  ];
  given([])
    .when(register('new', { prior }))
    .then(t, [
      { type: 'ApiKeyRegistryOpened', data: { ownerId: 'u1', keys: [{ keyId: 'old-1', expiresAt: null, registeredAt: EARLIER }], at: NOW } },
      { type: 'ApiKeyRegistered', data: { keyId: 'new', expiresAt: null, registeredAt: NOW } },
    ]);
});

t.test('ten earlier keys fill the registry as it opens: the 11th is refused', async (t) => {
  const prior = ten.map((keyId) => ({ keyId, expiresAt: null, createdAt: EARLIER }));
  const refused = given([])
    .when(register('k10', { prior }))
    .thenRefused(t, 'API_KEY_LIMIT_REACHED', /at most 10 active API keys/);
  t.same(refused?.details, { maxActiveKeys: 10 });
});

t.test('an opened registry ignores what the command says of earlier keys', async (t) => {
  given([opened()])
    .when(register('new', { prior: [{ keyId: 'old-1', expiresAt: null, createdAt: EARLIER }] }))
    .then(t, [{ type: 'ApiKeyRegistered', data: { keyId: 'new', expiresAt: null, registeredAt: NOW } }]);
});

t.test('ten active keys: the 11th is refused, and nothing is appended', async (t) => {
  given(full).when(register('k10')).thenRefused(t, 'API_KEY_LIMIT_REACHED');
  const facts: Record<string, KeyFact> = Object.fromEntries(ten.map((k) => [k, 'active']));
  given(full).when(register('k10', { facts })).thenRefused(t, 'API_KEY_LIMIT_REACHED', undefined);
});

t.test('a key its stream says is revoked frees its place, recorded as lapsed', async (t) => {
  given(full)
    .when(register('k10', { facts: { k3: 'revoked' } }))
    .then(t, [
      { type: 'ApiKeyLapsed', data: { keyId: 'k3', why: 'revoked', at: NOW } },
      { type: 'ApiKeyRegistered', data: { keyId: 'k10', expiresAt: null, registeredAt: NOW } },
    ]);
});

t.test('an expired key frees its place', async (t) => {
  const history = [opened(), ...ten.slice(0, 9).map((k) => registered(k)), registered('k9', '2026-11-27T09:59:59.000Z')];
  given(history)
    .when(register('k10'))
    .then(t, [
      { type: 'ApiKeyLapsed', data: { keyId: 'k9', why: 'expired', at: NOW } },
      { type: 'ApiKeyRegistered', data: { keyId: 'k10', expiresAt: null, registeredAt: NOW } },
    ]);
});

t.test('a key its stream never recorded keeps its place for the grace period (a creation in flight), then frees it', async (t) => {
  const justNow = new Date(Date.parse(NOW) - UNRECORDED_GRACE_MS + 1).toISOString();
  const inFlight = [opened(), ...ten.slice(0, 9).map((k) => registered(k)), registered('k9', null, justNow)];
  given(inFlight)
    .when(register('k10', { facts: { k9: 'unrecorded' } }))
    .thenRefused(t, 'API_KEY_LIMIT_REACHED');
  const later = new Date(Date.parse(justNow) + UNRECORDED_GRACE_MS).toISOString();
  given(inFlight)
    .when(register('k10', { facts: { k9: 'unrecorded' } }, later))
    .then(t, [
      { type: 'ApiKeyLapsed', data: { keyId: 'k9', why: 'unrecorded', at: later } },
      { type: 'ApiKeyRegistered', data: { keyId: 'k10', expiresAt: null, registeredAt: later } },
    ]);
});

t.test('the cap comes before the key is checked; a key refused takes no place; a repeat changes nothing', async (t) => {
  given(full)
    .when(register('k10', { key: { ...asked, name: '' } }))
    .thenRefused(t, 'API_KEY_LIMIT_REACHED');
  given([opened()])
    .when(register('k10', { key: { ...asked, name: '' } }))
    .thenRefused(t, 'VALIDATION_FAILED', /name/);
  given([opened()])
    .when(register('k10', { key: { ...asked, type: 'developer' } }))
    .thenRefused(t, 'KEY_TYPE_NOT_ALLOWED');
  given([opened(), registered('k10')])
    .when(register('k10'))
    .then(t, [], 'registered already');
});
