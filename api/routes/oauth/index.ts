import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { describeScope, oauthScopes, recommendedOAuthScopes } from '../../../domain/access/oauth-scopes.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import { OAUTH_ROUTES } from '../../oauth/server.ts';
import { publicBaseUrl } from '../developers/record.ts';
import { countAnonymousCallers } from '../../plugins/rate-limit.ts';
import consentRoutes from './consent.ts';
import { connectorMetadata, protectedResourceMetadata, tokenStatus } from './schemas.ts';

const tags = ['OAuth'];

/**
 * The OAuth group: the authorization server's own endpoints (authorize, token, introspect, revoke,
 * register, jwks and RFC 8414 metadata) handed to oidc-provider's Koa application untouched; the
 * consent page; the protected resource's metadata (RFC 9728), GET /status and the directory record.
 */
export default async function oauthRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  await app.register(async (scope) => {
    countAnonymousCallers(scope);
    // The provider reads the bodies itself (form-encoded, JSON for registration): Fastify leaves the stream alone.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const forward = async (request: FastifyRequest, reply: FastifyReply) => {
      const server = await scope.oauth.server();
      // The provider builds its URLs from the request's host and protocol: those of the issuer,
      // never the caller's Host or X-Forwarded-* (a cache keyed without Host would otherwise serve
      // a discovery document pointing at the attacker); its client address is the one Fastify trusts.
      const issuer = new URL(scope.oauth.settings().issuer);
      Object.assign(request.raw.headers, { 'x-forwarded-host': issuer.host, 'x-forwarded-proto': issuer.protocol.slice(0, -1), 'x-forwarded-for': request.ip });
      reply.hijack();
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
      await server.handle(request.raw, reply.raw);
    };
    const provided = (method: HTTPMethods[], url: string, summary: string, config = {}) =>
      scope.route({ method, url, schema: { tags, summary }, config, handler: forward });
    // Its GET counts in the anonymous budget too: it stores an interaction and may fetch a client ID metadata document.
    provided(['GET', 'POST'], OAUTH_ROUTES.authorization, 'Authorization endpoint: code flow with PKCE (S256); redirects to the consent page', {
      anonymousBudget: true,
    });
    provided(['GET'], `${OAUTH_ROUTES.authorization}/:uid`, 'Where the consent page returns the browser to finish the authorization');
    provided(['POST', 'OPTIONS'], OAUTH_ROUTES.token, 'Token endpoint (form-encoded): authorization_code with code_verifier; Cache-Control: no-store');
    provided(['POST'], OAUTH_ROUTES.introspection, 'Token introspection (RFC 7662), for the client the token was issued to');
    provided(['POST'], OAUTH_ROUTES.revocation, 'Token revocation (RFC 7009)');
    provided(['POST'], OAUTH_ROUTES.registration, 'Dynamic client registration (RFC 7591)');
    provided(['GET'], `${OAUTH_ROUTES.registration}/:clientId`, 'A registered client, read with its registration access token');
    provided(['GET', 'OPTIONS'], OAUTH_ROUTES.jwks, "The authorization server's public keys");
    provided(['GET', 'OPTIONS'], '/.well-known/oauth-authorization-server', 'Authorization server metadata (RFC 8414)');
  });

  await app.register(consentRoutes);

  const resourceMetadata = (surface: 'api' | 'mcp' = 'api') => {
    const { issuer, resource, mcpResource } = app.oauth.settings();
    return {
      resource: surface === 'mcp' ? mcpResource : resource,
      authorization_servers: [issuer],
      scopes_supported: [...oauthScopes],
      bearer_methods_supported: ['header'],
      resource_name: surface === 'mcp' ? 'Agent Trading Platform MCP server' : 'Agent Trading Platform API',
      resource_documentation: `${publicBaseUrl(app)}/docs`,
    };
  };
  const metadataSchema = { tags, summary: 'Protected resource metadata (RFC 9728)', response: { 200: protectedResourceMetadata } };
  app.get('/.well-known/oauth-protected-resource', { schema: metadataSchema }, async () => resourceMetadata());
  // RFC 9728 §3.1: the metadata of the resource `${base}/api` is also found by inserting the well-known path before `/api`.
  app.get('/.well-known/oauth-protected-resource/api', { schema: { ...metadataSchema, hide: true } }, async () => resourceMetadata());
  // The MCP endpoint is a resource of its own: tokens for it are not accepted by the REST API, nor the reverse.
  app.get(
    '/.well-known/oauth-protected-resource/mcp',
    { schema: { ...metadataSchema, summary: 'Protected resource metadata of the MCP endpoint (RFC 9728)' } },
    async () => resourceMetadata('mcp'),
  );

  app.get(
    '/status',
    {
      schema: {
        tags,
        summary: 'The presented OAuth access token: active, sub, client_id, scope, exp (inactive: only active false)',
        response: { 200: envelopeOf(tokenStatus) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const token = await app.oauth.activeToken(request);
      if (!token) return ok({ active: false });
      return ok({ active: true, sub: token.sub, client_id: token.clientId, scope: token.scope, exp: token.exp });
    },
  );

  app.get(
    '/public/directory/connector.json',
    { schema: { tags, summary: 'Directory connector metadata: authorize URL, token URL, recommended scopes', response: { 200: connectorMetadata } } },
    async () => {
      const base = publicBaseUrl(app);
      const { issuer, resource, mcpResource } = app.oauth.settings();
      return {
        name: 'Agent Trading Platform',
        description: 'Follow trading agents, manage their capital pools, wallet and trades.',
        apiBaseUrl: `${base}/api`,
        resource,
        mcp: { url: `${base}/mcp`, resource: mcpResource, protectedResourceMetadataUrl: `${base}/.well-known/oauth-protected-resource/mcp` },
        issuer,
        authorizationServerMetadataUrl: `${issuer}/.well-known/oauth-authorization-server`,
        protectedResourceMetadataUrl: `${base}/.well-known/oauth-protected-resource`,
        authorizationUrl: `${issuer}${OAUTH_ROUTES.authorization}`,
        tokenUrl: `${issuer}${OAUTH_ROUTES.token}`,
        registrationUrl: `${issuer}${OAUTH_ROUTES.registration}`,
        grantTypes: ['authorization_code'],
        codeChallengeMethods: ['S256'],
        recommendedScopes: [...recommendedOAuthScopes],
        scopes: oauthScopes.map((name) => ({ name, description: describeScope(name) })),
        documentationUrl: `${base}/docs`,
      };
    },
  );
}
