// The permissions a caller holds, by scope. A JWT session holds every scope of its user's role; an
// API key holds the scopes it was created with (never beyond its owner's role); an OAuth token the
// scopes its user approved (never admin ones). Legacy names stay accepted as aliases.
import { z } from 'zod';
import type { Role } from '../user/events.ts';

interface ScopeEntry {
  description: string;
  /** the roles that may hold it */
  roles: readonly Role[];
  /** older names accepted for it */
  aliases: readonly string[];
  /** granted to a new API key that names no scopes */
  byDefault: boolean;
}

const everyone: readonly Role[] = ['user', 'developer', 'admin'];
const admins: readonly Role[] = ['admin'];

export const scopeTable = {
  'profile:read': { description: 'Read the user document, sessions and social status', roles: everyone, aliases: ['user:read'], byDefault: true },
  'profile:write': {
    description: 'Change the profile (username, language, wallet mode, guide agent, interests, pinned agents)',
    roles: everyone,
    aliases: ['user:write'],
    byDefault: true,
  },
  'marketplace:read': { description: 'List and read agents', roles: everyone, aliases: ['agents:read'], byDefault: true },
  'subscriptions:read': { description: "Read the caller's subscriptions (pools) and their ledgers", roles: everyone, aliases: ['bots:read'], byDefault: true },
  'subscriptions:write': {
    description: 'Follow and stop following agents; add and withdraw capital',
    roles: everyone,
    aliases: ['bots:write'],
    byDefault: true,
  },
  'trades:read': { description: "Read the caller's agent trades", roles: everyone, aliases: [], byDefault: true },
  'trades:write': { description: "Close the caller's agent trades", roles: everyone, aliases: [], byDefault: true },
  'wallet:read': { description: "Read the caller's wallet (balances and manual lots)", roles: everyone, aliases: [], byDefault: true },
  'wallet:trade': { description: 'Buy and sell through the wallet, withdraw the stablecoin', roles: everyone, aliases: ['wallet:write'], byDefault: true },
  'developer:read': {
    description: "Read the developer's own agents, reviews, subscribers and signal inbox (listing a first agent makes a user a developer)",
    roles: everyone,
    aliases: [],
    byDefault: true,
  },
  'developer:write': { description: 'List, edit, replay signals of and delete agents', roles: everyone, aliases: ['agents:write'], byDefault: true },
  'keys:read': { description: "List the caller's API keys", roles: everyone, aliases: [], byDefault: false },
  'keys:write': { description: 'Create and revoke API keys', roles: everyone, aliases: [], byDefault: false },
  'admin:read': { description: 'Administrators: read operations, audits', roles: admins, aliases: [], byDefault: false },
  'admin:write': { description: 'Administrators: reviews, freezes, deposits, prices, tiers', roles: admins, aliases: [], byDefault: false },
} as const satisfies Record<string, ScopeEntry>;

export type Scope = keyof typeof scopeTable;
export const scopes = Object.keys(scopeTable) as Scope[];
export const scopeSchema = z.enum(scopes as [Scope, ...Scope[]]);

const aliasOf = new Map<string, Scope>(scopes.flatMap((s) => (scopeTable[s].aliases as readonly string[]).map((a) => [a, s] as const)));

/** `admin:*` (and `x:*` in general) names every scope of its prefix. */
const wildcard = (name: string): Scope[] | null => (name.endsWith(':*') ? scopes.filter((s) => s.startsWith(name.slice(0, -1))) : null);

/** The scopes a name means (itself, its alias target, a wildcard's); null when unknown. */
export function resolveScope(name: string): Scope[] | null {
  if ((scopes as string[]).includes(name)) return [name as Scope];
  const alias = aliasOf.get(name);
  if (alias) return [alias];
  const all = wildcard(name);
  return all && all.length > 0 ? all : null;
}

/** Names (canonical, aliases, wildcards) to canonical scopes, deduplicated in table order; `unknown` lists what is not a scope. */
export function resolveScopes(names: readonly string[]): { scopes: Scope[]; unknown: string[] } {
  const found = new Set<Scope>();
  const unknown: string[] = [];
  for (const name of names) {
    const resolved = resolveScope(name);
    if (resolved) for (const s of resolved) found.add(s);
    else unknown.push(name);
  }
  return { scopes: scopes.filter((s) => found.has(s)), unknown };
}

/** Every scope a role may hold: what a JWT session of that role holds. */
export const scopesOfRole = (role: Role): Scope[] => scopes.filter((s) => (scopeTable[s].roles as readonly Role[]).includes(role));

/** What a new API key holds when it names no scopes: the role's default ones (never admin, never key management). */
export const defaultScopesOf = (role: Role): Scope[] => scopesOfRole(role).filter((s) => scopeTable[s].byDefault);

export const isAdminScope = (s: Scope): boolean => s.startsWith('admin:');
