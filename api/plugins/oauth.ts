import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isAdminScope, resolveScopes, scopesOfRole } from '../../domain/access/scopes.ts';
import { getUser } from '../../projections/users/queries.ts';
import { createAuthorizationServer, oauthSettings, type ActiveToken, type AuthorizationServer, type OAuthSettings } from '../oauth/server.ts';
import { publicBaseUrl } from '../routes/developers/record.ts';
import '../types.ts';

declare module 'fastify' {
  interface FastifyInstance {
    oauth: {
      /** issuer, resource, consent page address and keys (the issuer is PUBLIC_BASE_URL, else the listening address) */
      settings(): OAuthSettings;
      /** the OAuth authorization server, made at the first request that needs it */
      server(): Promise<AuthorizationServer>;
      /** the request's bearer token when it is an active OAuth access token of ours */
      activeToken(request: FastifyRequest): Promise<ActiveToken | null>;
    };
  }
}

const BEARER = /^Bearer\s+(\S+)$/i;
/**
 * The resource a request addresses: the MCP endpoint's routes say so in their config, every other
 * route is the REST API. Decided by the matched route, never by the URL's text, which the router
 * matches after decoding (`/%6dcp` reaches `/mcp`).
 */
const resourceOf = (request: FastifyRequest, settings: OAuthSettings) =>
  request.routeOptions.config?.oauthResource === 'mcp' ? settings.mcpResource : settings.resource;
/** the provider's opaque access tokens: base64url, no dots (our JWTs have two) */
const OPAQUE_TOKEN = /^[A-Za-z0-9_-]{20,128}$/;

/**
 * OAuth 2.1 access tokens (`mode: oauth`), after the JWT auth plugin: a bearer token that is not one
 * of our JWTs but an active access token of our authorization server, bound to the API resource,
 * resolves the caller: the token's user (from the users read model), its client, and the granted
 * scopes that the user's role still holds (never an admin scope). Protected routes answer 401 and 403
 * with the RFC 6750 / RFC 9728 WWW-Authenticate challenge so clients find the authorization server.
 */
async function oauthPlugin(app: FastifyInstance): Promise<void> {
  let settings: OAuthSettings | undefined;
  let server: Promise<AuthorizationServer> | undefined;
  const settingsOf = () => (settings ??= oauthSettings(app.deps.config, publicBaseUrl(app)));
  const serverOf = () => {
    server ??= createAuthorizationServer(app.deps, settingsOf());
    server.catch(() => (server = undefined)); // a failed start is tried again by the next request
    return server;
  };
  const tokens = new WeakMap<FastifyRequest, Promise<ActiveToken | null>>();
  const activeToken = (request: FastifyRequest) => {
    let found = tokens.get(request);
    if (!found) {
      const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
      found = token && OPAQUE_TOKEN.test(token) ? serverOf().then((s) => s.verifyAccessToken(token)) : Promise.resolve(null);
      tokens.set(request, found);
    }
    return found;
  };
  app.decorate('oauth', { settings: settingsOf, server: serverOf, activeToken });

  app.addHook('onRequest', async (request) => {
    if (request.identity || !request.headers.authorization) return;
    const token = await activeToken(request);
    // A token serves the resource it was issued for: the MCP endpoint's at /mcp, the API's elsewhere.
    if (!token || token.resource !== resourceOf(request, settingsOf())) return;
    const user = await getUser(app.deps.pool, token.sub);
    if (!user) return;
    const held = new Set(scopesOfRole(user.role));
    const granted = resolveScopes(token.scope.split(' ').filter(Boolean)).scopes.filter((s) => held.has(s) && !isAdminScope(s));
    request.identity = { userId: user.id, email: user.email, role: user.role, tier: user.tier, mode: 'oauth', scopes: granted, clientId: token.clientId };
  });

  app.addHook('onSend', async (request, reply) => {
    const access = request.routeOptions.config?.access;
    if (!access || (reply.statusCode !== 401 && reply.statusCode !== 403)) return;
    const metadata = `resource_metadata="${publicBaseUrl(app)}/.well-known/oauth-protected-resource"`;
    if (reply.statusCode === 401) reply.header('www-authenticate', `Bearer ${metadata}`);
    else if (request.identity?.mode === 'oauth' && access.scope) {
      reply.header('www-authenticate', `Bearer error="insufficient_scope", scope="${access.scope}", ${metadata}`);
    }
  });
}

export default fp(oauthPlugin, { name: 'oauth', dependencies: ['auth'] });
