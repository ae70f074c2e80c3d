// The OAuth 2.1 authorization server: oidc-provider (certified, maintained) configured for the
// authorization code grant with PKCE (S256) and nothing else: no refresh tokens, no implicit or
// hybrid flows, no OpenID Connect scopes. Its records live in PostgreSQL (infra/oauth-store.ts), its
// keys derive from the master secret (keys.ts), its consent page is ours (api/routes/oauth/consent.ts).
import Provider, { errors, interactionPolicy, type KoaContextWithOIDC, type Middleware } from 'oidc-provider';
import { oauthScopes, readOAuthScopeRequest } from '../../domain/access/oauth-scopes.ts';
import { createOAuthStore } from '../../infra/oauth-store.ts';
import { getUser } from '../../projections/users/queries.ts';
import type { AppDeps } from '../deps.ts';
import { clientIdMetadataDocuments, clientMetadataFetch } from './client-metadata.ts';
import { oauthKeys, type OAuthKeys } from './keys.ts';
import { redirectUriRule } from './redirect-uris.ts';
import { errorPage } from './page.ts';

/** What the OAuth routes need to know without the provider itself. */
export interface OAuthSettings {
  issuer: string;
  /** the REST API's resource indicator (RFC 8707): a token's default resource */
  resource: string;
  /** the MCP endpoint's resource indicator: a token bound to it is accepted at `/mcp` only */
  mcpResource: string;
  /** where the consent page is served; an interaction's page is `${consentUrl}/${uid}` */
  consentUrl: string;
  keys: OAuthKeys;
}

export interface AuthorizationServer extends OAuthSettings {
  provider: Provider;
  /** the provider's Koa application as a Node request handler */
  handle: ReturnType<Provider['callback']>;
  /** An access token presented to the API: its grant, when the token is active and bound to our resource. */
  verifyAccessToken(token: string): Promise<ActiveToken | null>;
}

export interface ActiveToken {
  sub: string;
  clientId: string;
  /** the granted scopes, space-separated, canonical names */
  scope: string;
  exp: number;
  /** the resource the token is bound to: the REST API's or the MCP endpoint's */
  resource: string;
}

export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  introspection: '/oauth/introspect',
  revocation: '/oauth/revoke',
  registration: '/oauth/register',
  jwks: '/oauth/jwks',
} as const;

const HOUR = 3600;
const DAY = 24 * HOUR;

/**
 * The scope of an authorization request that names none (OAuth 2.1 lets the server pick a default
 * or refuse): the least a client can hold, reading the user's profile. A client that needs more
 * asks for it, or is told by a 403 `insufficient_scope` naming the scopes a route or tool needs.
 */
export const DEFAULT_OAUTH_SCOPE = 'profile:read';

/**
 * Runs first at every authorization request: gives a request without a scope the default one, refuses a scope
 * the table does not know (invalid_scope, to the client's redirect_uri with state and iss), and
 * rewrites the request's scopes to their canonical names without `admin:*`, which OAuth never
 * grants, so the consent page, the grant and the token all speak canonical scope names.
 */
function scopeCheck() {
  const { Check } = interactionPolicy;
  return new Check('scopes_known', 'the requested scopes are known', (ctx: KoaContextWithOIDC) => {
    const asked = ctx.oidc.params.scope;
    const request = readOAuthScopeRequest(typeof asked === 'string' && asked.trim() !== '' ? asked : DEFAULT_OAUTH_SCOPE);
    if (request.unknown.length > 0) throw new errors.InvalidScope('unknown scope requested', request.unknown.join(' '));
    if (request.scopes.length === 0) throw new errors.InvalidScope('administrator and key management scopes are not available through OAuth');
    ctx.oidc.params.scope = request.scopes.join(' ');
    return Check.NO_NEED_TO_PROMPT;
  });
}

/**
 * A refused exchange of an authorization code spends the code (a wrong code_verifier, a changed
 * redirect_uri...): a code gets one try. The provider leaves it usable until it expires; deleted, a
 * later exchange of it is invalid_grant. Only a try by the client the code was issued to spends it,
 * and a code already exchanged is kept, so that its reuse still revokes what it gave.
 */
function oneTryPerCode(provider: Provider): Middleware {
  return async (ctx, next) => {
    await next();
    const { route, params, client } = ctx.oidc ?? {};
    if (route !== 'token' || ctx.status !== 400 || !client || params?.grant_type !== 'authorization_code' || typeof params.code !== 'string') return;
    const code = await provider.AuthorizationCode.find(params.code, { ignoreExpiration: true });
    if (code && code.clientId === client.clientId && !code.consumed) await code.destroy();
  };
}

export function oauthSettings(config: AppDeps['config'], baseUrl: string): OAuthSettings {
  return {
    issuer: baseUrl,
    resource: `${baseUrl}/api`,
    mcpResource: `${baseUrl}/mcp`,
    consentUrl: (config.PORTAL_URL ?? `${baseUrl}/oauth/consent`).replace(/\/+$/, ''),
    keys: oauthKeys(config.JWT_SECRET),
  };
}

export interface AuthorizationServerOptions {
  /** how the provider fetches client ID metadata documents; public addresses only by default (client-metadata.ts), tests also reach a loopback server */
  fetch?: typeof globalThis.fetch;
}

export async function createAuthorizationServer(
  deps: AppDeps,
  settings: OAuthSettings,
  options: AuthorizationServerOptions = {},
): Promise<AuthorizationServer> {
  const { config, pool, logger } = deps;
  const { issuer, resource, mcpResource, consentUrl, keys } = settings;
  const resources = [resource, mcpResource];
  const store = createOAuthStore(pool, {
    alreadyConsumed: () => new errors.InvalidGrant('authorization code already used'),
    unusedClientTtlHours: config.OAUTH_UNUSED_CLIENT_TTL_HOURS,
    unstorable: (message) => new errors.InvalidClientMetadata(message),
  });
  const policy = interactionPolicy.base();
  policy.get('login')!.checks.add(scopeCheck(), 0);

  const provider = new Provider(issuer, {
    adapter: store.Adapter,
    fetch: options.fetch ?? clientMetadataFetch,
    async findAccount(_ctx, id) {
      const user = await getUser(pool, id);
      return user ? { accountId: user.id, claims: () => ({ sub: user.id }) } : undefined;
    },
    jwks: keys.jwks,
    cookies: { keys: keys.cookieKeys },
    // The scopes a client may register (RFC 7591 `scope`, which MCP clients send from the protected
    // resource metadata) and then be limited to. They carry no OpenID claims: the consent grants them
    // to the resource server below; `openid` is refused by scopeCheck.
    scopes: [...oauthScopes],
    responseTypes: ['code'],
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    clientDefaults: { grant_types: ['authorization_code'], response_types: ['code'], id_token_signed_response_alg: 'EdDSA' },
    extraClientMetadata: redirectUriRule(errors),
    // OAuth 2.1: the token request names the redirect_uri of its authorization request, always.
    allowOmittingSingleRegisteredRedirectUri: false,
    pkce: { required: () => true },
    ttl: {
      AuthorizationCode: config.OAUTH_CODE_TTL_SECONDS,
      AccessToken: config.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
      Interaction: HOUR,
      Session: DAY,
      Grant: 14 * DAY,
    },
    routes: OAUTH_ROUTES,
    interactions: { url: (_ctx, interaction) => `${consentUrl}/${interaction.uid}`, policy },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      introspection: {
        enabled: true,
        // A client learns about its own tokens only.
        allowedPolicy: async (_ctx: unknown, client: { clientId: string }, token: { clientId?: string }) => token.clientId === client.clientId,
      },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (!resources.includes(indicator)) throw new errors.InvalidTarget('unknown resource indicator');
          return { scope: oauthScopes.join(' '), audience: indicator, accessTokenTTL: config.OAUTH_ACCESS_TOKEN_TTL_SECONDS, accessTokenFormat: 'opaque' };
        },
      },
      clientIdMetadataDocument: clientIdMetadataDocuments(deps.redis, config.JWT_SECRET, errors),
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      dPoP: { enabled: false },
    },
    async renderError(ctx, out) {
      const page = errorPage('The authorization request cannot be completed', out.error_description ?? out.error);
      (ctx as unknown as { set(name: string, value: string): void }).set('content-security-policy', page.csp);
      (ctx as unknown as { type: string }).type = 'html';
      ctx.body = page.html;
    },
  });
  // The forwarded headers it reads are set by our forwarding route alone (api/routes/oauth/index.ts).
  provider.proxy = true;
  // The discovery document lists the API's scopes (the provider would list its OpenID ones).
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'discovery' && ctx.body && typeof ctx.body === 'object') {
      Object.assign(ctx.body, { scopes_supported: [...oauthScopes] });
    }
  });
  provider.use(oneTryPerCode(provider));
  provider.on('server_error', (_ctx: unknown, err: Error) => logger.error({ err }, 'oauth server error'));

  return {
    ...settings,
    provider,
    handle: provider.callback(),
    async verifyAccessToken(token) {
      const found = await provider.AccessToken.find(token);
      if (!found?.isValid) return null;
      const audience = Array.isArray(found.aud) ? found.aud : [found.aud];
      const bound = resources.find((r) => audience.includes(r));
      if (!bound) return null;
      const grant = await provider.Grant.find(found.grantId);
      if (!grant || grant.isExpired || grant.clientId !== found.clientId || grant.accountId !== found.accountId) return null;
      return { sub: found.accountId, clientId: found.clientId, scope: found.scope ?? '', exp: found.exp, resource: bound };
    },
  };
}
