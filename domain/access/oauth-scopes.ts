// Which scopes an OAuth authorization request asks for, in canonical names: legacy aliases and
// wildcards resolved through the scope table, `admin:*` withheld (never granted through OAuth), and
// names the table does not know set apart so the request can be refused (RFC 6749 invalid_scope).
import { isAdminScope, resolveScopes, scopes, scopeTable, type Scope } from './scopes.ts';

export interface OAuthScopeRequest {
  /** what the consent page may grant, canonical, in table order */
  scopes: Scope[];
  /** known scopes that OAuth never grants (administrators' and key management) */
  withheld: Scope[];
  /** names that are no scope, alias or wildcard of the table */
  unknown: string[];
}

/**
 * Never granted through OAuth: administrators' scopes, and key management (a connector approved
 * for a while must not mint the user a key that outlives its token).
 */
export const withheldFromOAuth = (s: Scope): boolean => isAdminScope(s) || s.startsWith('keys:');

/** Every scope a client may be granted through OAuth. */
export const oauthScopes: readonly Scope[] = scopes.filter((s) => !withheldFromOAuth(s));

/** A few read-only scopes a directory connector starts with. */
export const recommendedOAuthScopes: readonly Scope[] = ['profile:read', 'marketplace:read', 'subscriptions:read', 'trades:read', 'wallet:read'];

/** The `scope` parameter (space-separated, RFC 6749 §3.3) read against the scope table. */
export function readOAuthScopeRequest(scope: string | undefined): OAuthScopeRequest {
  const names = (scope ?? '').split(' ').filter(Boolean);
  const resolved = resolveScopes(names);
  return {
    scopes: resolved.scopes.filter((s) => !withheldFromOAuth(s)),
    withheld: resolved.scopes.filter(withheldFromOAuth),
    unknown: resolved.unknown,
  };
}

/** A scope's description for the consent page. */
export const describeScope = (scope: Scope): string => scopeTable[scope].description;
