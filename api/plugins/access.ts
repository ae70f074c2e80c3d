import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler, preValidationHookHandler } from 'fastify';
import { withheldFromOAuth } from '../../domain/access/oauth-scopes.ts';
import { isAdminScope, scopeTable, type Scope } from '../../domain/access/scopes.ts';
import { refuse } from '../../domain/shared/errors.ts';
import type { AuthMode, Identity, RouteAccess } from '../types.ts';
import '../types.ts';

const ALL_MODES: readonly AuthMode[] = ['jwt', 'apiKey', 'oauth'];

/** The OpenAPI security requirements of a route: any one of its modes, OAuth with the route's scope. */
function securityOf(access: RouteAccess): Array<Record<string, string[]>> {
  const modes = access.modes ?? ALL_MODES;
  const oauthScopes = access.scope && !withheldFromOAuth(access.scope) ? [access.scope] : [];
  const requirements: Array<Record<string, string[]>> = [];
  if (modes.includes('jwt')) requirements.push({ bearerAuth: [] });
  if (modes.includes('apiKey')) requirements.push({ apiKey: [], apiSignature: [], apiTimestamp: [] });
  if (modes.includes('oauth') && (!access.scope || !withheldFromOAuth(access.scope))) requirements.push({ oauth2: oauthScopes });
  return requirements;
}

/** 403 without the role or the scope. */
function checkScope(identity: Identity, scope: RouteAccess['scope']) {
  if (!scope) return;
  if (isAdminScope(scope) && identity.role !== 'admin') throw refuse('ADMIN_REQUIRED', 'administrator role required');
  if (!identity.scopes.includes(scope)) throw refuse('INSUFFICIENT_SCOPE', `this route needs the scope ${scope}`, { requiredScope: scope });
}

/**
 * 401 without a caller or in a mode the route does not take; then the scope. An API key's scopes
 * are checked only once its signature is (preValidation, after the api-key plugin's own hook): a
 * holder of the key without its secret learns nothing of what the key may do.
 */
function enforce(access: RouteAccess): { onRequest: onRequestHookHandler; preValidation: preValidationHookHandler } {
  const modes = access.modes ?? ALL_MODES;
  return {
    async onRequest(request: FastifyRequest) {
      const identity = request.identity;
      if (!identity) throw refuse('AUTHENTICATION_REQUIRED', 'authentication required');
      if (!modes.includes(identity.mode))
        throw refuse(
          'AUTHENTICATION_REQUIRED',
          `this route does not accept ${identity.mode === 'apiKey' ? 'API keys' : identity.mode === 'oauth' ? 'OAuth tokens' : 'session tokens'}`,
        );
      if (identity.mode !== 'apiKey') checkScope(identity, access.scope);
    },
    async preValidation(request: FastifyRequest) {
      if (request.identity?.mode === 'apiKey') checkScope(request.identity, access.scope);
    },
  };
}

const hooksOf = <H>(hooks: H | H[] | undefined): H[] => (hooks ? (Array.isArray(hooks) ? hooks : [hooks]) : []);

/**
 * Route access: a route declares `config: { access: { scope, modes? } }`; this plugin adds its
 * check (after the auth plugins resolved the caller, before validation) and its OpenAPI security.
 */
async function accessPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (!access) return;
    const { onRequest, preValidation } = enforce(access);
    route.onRequest = [onRequest, ...hooksOf(route.onRequest)];
    route.preValidation = [preValidation, ...hooksOf(route.preValidation)];
    if (route.schema) route.schema = { ...route.schema, security: securityOf(access) };
  });
}

/** The security schemes of the OpenAPI document: one per mode (API keys need their three headers). */
export function securitySchemes(publicBaseUrl: string) {
  return {
    bearerAuth: { type: 'http' as const, scheme: 'bearer', bearerFormat: 'JWT', description: 'A user session: the access token of POST /api/auth/verify' },
    apiKey: { type: 'apiKey' as const, in: 'header' as const, name: 'x-api-key', description: 'An API key; with x-signature and x-timestamp' },
    apiSignature: {
      type: 'apiKey' as const,
      in: 'header' as const,
      name: 'x-signature',
      description: 'Lowercase hex HMAC-SHA256, keyed with the secret key, of x-timestamp + METHOD + path (with the query as sent) + the raw body',
    },
    apiTimestamp: {
      type: 'apiKey' as const,
      in: 'header' as const,
      name: 'x-timestamp',
      description: 'Epoch milliseconds; at most 5 minutes from the server clock',
    },
    oauth2: {
      type: 'oauth2' as const,
      description: 'OAuth 2.1 authorization code with PKCE (S256); no refresh tokens',
      flows: {
        authorizationCode: {
          authorizationUrl: `${publicBaseUrl}/oauth/authorize`,
          tokenUrl: `${publicBaseUrl}/oauth/token`,
          scopes: Object.fromEntries(
            Object.entries(scopeTable)
              .filter(([s]) => !withheldFromOAuth(s as Scope))
              .map(([s, e]) => [s, e.description]),
          ),
        },
      },
    },
  };
}

export default fp(accessPlugin, { name: 'access', dependencies: ['auth'] });
