// Where an authorization code may be delivered in cleartext: nowhere but the user's own machine.
// OAuth 2.1 and the MCP authorization profile allow http redirect URIs only on the loopback
// interface (a native client's local listener, RFC 8252 §7.3); every other http one would carry the
// code across the network unencrypted. The provider already refuses the rest (fragments, other
// schemes for web clients); this is the one rule it leaves to us.
import type { errors as ProviderErrors } from 'oidc-provider';

/** The loopback hosts the provider itself recognises for native clients (127.0.0.1, [::1], localhost). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** The first of `uris` that is plain http to a host other than the loopback; undefined when none is. */
export function cleartextRedirectUri(uris: unknown): string | undefined {
  if (!Array.isArray(uris)) return undefined; // not a list: the provider's own checks refuse it
  return uris.find((uri): uri is string => {
    const url = typeof uri === 'string' ? URL.parse(uri) : null;
    return url !== null && url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname);
  });
}

/**
 * The provider's `extraClientMetadata`: its validator sees every client it builds (a registration, a
 * client ID metadata document, a client stored before this rule), so none keeps a cleartext redirect
 * URI. The message starts with `redirect_uris`, which the provider answers as invalid_redirect_uri.
 */
export function redirectUriRule(errors: typeof ProviderErrors) {
  return {
    properties: ['redirect_uris'],
    validator(_ctx: unknown, key: string, value: unknown) {
      const cleartext = key === 'redirect_uris' ? cleartextRedirectUri(value) : undefined;
      if (cleartext)
        throw new errors.InvalidClientMetadata(`redirect_uris must use https, or http on the loopback (127.0.0.1, [::1], localhost) only: ${cleartext}`);
    },
  };
}
