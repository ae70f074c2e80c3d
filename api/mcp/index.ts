// The MCP endpoint (Streamable HTTP) inside the API: both protocol eras on `/mcp`, chosen per request.
// Our auth plugins and the rate limiter run first, as for REST; then the request is handed to the
// reference SDK (`reply.hijack()`): 2026-07-28 traffic to its stateless handler, 2025-era traffic to
// the session leg (api/mcp/legacy.ts). Every refusal answers JSON-RPC 2.0, never the REST envelope.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import { DomainError, refuse } from '../../domain/shared/errors.ts';
import { FRAMEWORK_REASONS } from '../plugins/errors.ts';
import { publicBaseUrl } from '../routes/developers/record.ts';
import { jsonRpcErrorBody, refusalBody } from './json-rpc.ts';
import { listenCaller, redisBus } from './bus.ts';
import { legacyLeg } from './legacy.ts';
import { nodeHandler } from './node-handler.ts';
import { createRelay } from './relay.ts';
import { authInfoOf, mcpServerFor } from './server.ts';

/** MCP messages are small; a tool's arguments are bounded by its schema well below this. */
const MCP_BODY_LIMIT = 256 * 1024;

/** The hostnames the endpoint answers in Host and Origin: MCP_ALLOWED_HOSTS, else the public address's. */
function allowedHostnames(app: FastifyInstance): Set<string> {
  const configured = app.deps.config.MCP_ALLOWED_HOSTS;
  const names = configured
    ? configured
        .split(',')
        .map((h) => h.trim())
        .filter(Boolean)
    : [new URL(publicBaseUrl(app)).hostname];
  return new Set(names.map((h) => h.toLowerCase()));
}

const hostnameOf = (value: string) => {
  try {
    return new URL(value.includes('://') ? value : `http://${value}`).hostname.toLowerCase();
  } catch {
    return null;
  }
};

function sendRefusal(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const reason =
    error instanceof DomainError ? error.reason : hasZodFastifySchemaValidationErrors(error) ? 'VALIDATION_FAILED' : FRAMEWORK_REASONS[error.statusCode ?? 500];
  if (!reason) {
    request.log.error({ err: error }, 'unhandled error at /mcp');
    return reply.code(500).send(jsonRpcErrorBody(-32603, 'Internal error'));
  }
  const { status, body } = refusalBody(reason, error.message, error instanceof DomainError ? error.details : undefined);
  if (status === 401) reply.header('www-authenticate', `Bearer resource_metadata="${publicBaseUrl(request.server)}/.well-known/oauth-protected-resource/mcp"`);
  return reply.code(status).send(body);
}

export default async function mcpRoutes(app: FastifyInstance): Promise<void> {
  const onerror = (error: Error) => app.log.debug({ mcpError: error.message }, 'mcp request refused');
  const relay = createRelay(app.deps.redis, onerror);
  const modern = createMcpHandler(mcpServerFor, { legacy: 'reject', onerror, bus: redisBus(app.deps.redis, relay, onerror) });
  const legacy = legacyLeg(app.deps, relay, onerror);
  const serveNode = nodeHandler(async (request, options) => {
    if (request.method !== 'POST' || (await isLegacyRequest(request, options.parsedBody))) return legacy.serve(request, options);
    return modern.fetch(request, options);
  }, onerror);
  let hostnames: Set<string> | undefined;
  app.addHook('onClose', async () => {
    legacy.close();
    await modern.close();
    relay.close();
  });

  // Every refusal of these routes (auth, rate limit, body) is JSON-RPC: this group's own handler.
  app.setErrorHandler(sendRefusal);

  // DNS rebinding: a page on another site (or a rebound name) must not reach the endpoint with the user's credentials.
  const checkHostAndOrigin = async (request: FastifyRequest, reply: FastifyReply) => {
    hostnames ??= allowedHostnames(app);
    const host = hostnameOf(request.headers.host ?? '');
    const origin = request.headers.origin;
    if (!host || !hostnames.has(host)) return reply.code(403).send(jsonRpcErrorBody(-32000, 'Invalid Host header'));
    if (origin !== undefined && !hostnames.has(hostnameOf(origin) ?? '')) return reply.code(403).send(jsonRpcErrorBody(-32000, 'Invalid Origin header'));
  };
  const requireCaller = async (request: FastifyRequest) => {
    if (!request.identity)
      throw refuse('AUTHENTICATION_REQUIRED', 'authentication required: a bearer token (session or OAuth for this resource) or a signed API key');
  };
  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    // What our hooks set (request id, rate-limit headers, security headers) goes out with the SDK's answer.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value as string);
    (request.raw as { auth?: unknown }).auth = authInfoOf(request, `${publicBaseUrl(app)}/.well-known/oauth-protected-resource/mcp`);
    // The caller travels with the request, for the listen streams' bus (api/mcp/bus.ts).
    await listenCaller.run(request.identity!, () => serveNode(request.raw, reply.raw, request.body));
  };
  const options = {
    onRequest: [checkHostAndOrigin, requireCaller],
    bodyLimit: MCP_BODY_LIMIT,
    schema: { hide: true },
    config: { oauthResource: 'mcp' as const },
  };
  app.post('/mcp', options, serve);
  app.get('/mcp', options, serve);
  app.get('/mcp/sse', options, serve);
  app.delete('/mcp', options, serve);
}
