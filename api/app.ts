import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import fastifyJwt from '@fastify/jwt';
import fastifyHelmet from '@fastify/helmet';
import fastifyCors from '@fastify/cors';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import { validatorCompiler } from 'fastify-type-provider-zod';
import type { AppDeps } from './deps.ts';
import { errorEnvelopeSchema, registerErrorHandling } from './plugins/errors.ts';
import { openapiTransform } from './plugins/openapi.ts';
import { responseSerializer } from './plugins/serializer.ts';
import { refuseUnstorableUrlText } from './plugins/unstorable-text.ts';
import authPlugin from './plugins/auth.ts';
import oauthPlugin from './plugins/oauth.ts';
import accessPlugin, { securitySchemes } from './plugins/access.ts';
import apiKeyPlugin from './plugins/api-key.ts';
import rateLimitPlugin from './plugins/rate-limit.ts';
import dispatchPlugin from './plugins/dispatch.ts';
import idempotencyPlugin from './plugins/idempotency.ts';
import { clientErrorHandler, frameworkErrors } from './plugins/client-errors.ts';
import { boundedJsonParser } from './plugins/json-bounds.ts';
import { httpDuration } from '../infra/metrics.ts';
import { routeGroups } from './routes/index.ts';
import healthRoutes from './routes/health/index.ts';
import './types.ts';

/** Verified access tokens remembered per process (fast-jwt's LRU). */
const JWT_VERIFIED_CACHE_SIZE = 10_000;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The origins a browser may call from: CORS_ORIGINS, else the portal's (PORTAL_ORIGIN, else PUBLIC_BASE_URL's); none in a bare development setup. */
function corsOrigins(config: AppDeps['config']): string[] {
  if (config.CORS_ORIGINS)
    return config.CORS_ORIGINS.split(',')
      .map((o) => o.trim())
      .filter(Boolean);
  const portal = config.PORTAL_ORIGIN ?? config.PUBLIC_BASE_URL;
  return portal ? [new URL(portal).origin] : [];
}

/** A number of proxies as the hops to believe (as Fastify does for a number, which its types omit). */
const trustProxyOf = (setting: AppDeps['config']['TRUST_PROXY']) => (typeof setting === 'number' ? (_address: string, hop: number) => hop < setting : setting);

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // A caller's request id is kept (it becomes the events' correlationId) when it is well formed.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : deps.ids.uuid();
    },
    // What a route takes unless it says more (its `bodyLimit`): the largest of these bodies (a
    // sign-in's with its 4 KiB captcha answer) is under 9 KB even with its text escaped (\uXXXX).
    bodyLimit: 16 * 1024,
    // Only the hops of the proxies in front (infra/config.ts TRUST_PROXY): otherwise a caller could
    // choose the address its per-address throttles count and the captcha provider is told.
    trustProxy: trustProxyOf(deps.config.TRUST_PROXY),
    // Slow clients (a byte a second) must not hold connections: headers, the whole request and an
    // idle keep-alive connection each have a deadline. Node checks the first two on an interval,
    // so it runs often enough for the headers deadline to mean what it says.
    http: {
      headersTimeout: deps.config.HTTP_HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(1000, Math.ceil(deps.config.HTTP_HEADERS_TIMEOUT_MS / 2)),
    },
    requestTimeout: deps.config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: deps.config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    // Refusals made before a route runs answer the envelope too.
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(deps.logger as FastifyBaseLogger),
  });
  app.setValidatorCompiler(validatorCompiler);
  // zod encodes answers, except hot routes' precompiled ones (checked against zod's encoding in tests)
  app.setSerializerCompiler(responseSerializer(deps.config.NODE_ENV === 'test'));
  app.decorate('deps', deps);
  app.decorateRequest('identity', null);
  registerErrorHandling(app);
  // Text PostgreSQL cannot store (NUL, an unpaired surrogate) is refused before any route runs,
  // naming the field: in a body by the parser, in the query and path parameters by the hook.
  // JSON bodies are bounded before they are parsed (api/plugins/json-bounds.ts): deep nesting and
  // too many keys and elements would hold the one event loop.
  const parseBody = boundedJsonParser(app);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    request.rawBody = body as string;
    parseBody(request, body as string, done);
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onRequest', refuseUnstorableUrlText);
  app.addHook('onResponse', async (request, reply) => {
    httpDuration.observe({ method: request.method, route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });

  // Security headers on every answer; JSON answers need no script, style or frame: default-src 'none'.
  // The docs page sets its own policy (swagger-ui's staticCSP). CORS: the allowed origins only.
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"] } },
  });
  await app.register(fastifyCors, { origin: corsOrigins(deps.config), credentials: false, maxAge: 600 });
  // Access tokens are HS256: verification accepts that algorithm only, not HS384 or HS512 under the same secret.
  // A verified token is remembered (fast-jwt's LRU, keyed by the token's hash, never past its `exp`): the
  // signature check and claims parse are then skipped on a client's next request (docs/decisions.md, "API keys remembered per process").
  await app.register(fastifyJwt, {
    secret: deps.config.JWT_SECRET,
    sign: { algorithm: 'HS256' },
    verify: { algorithms: ['HS256'], cache: JWT_VERIFIED_CACHE_SIZE },
  });
  const documentedBaseUrl = (deps.config.PUBLIC_BASE_URL ?? `http://${deps.config.HOST}:${deps.config.PORT}`).replace(/\/+$/, '');
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Agent Trading Platform API', version: '1.0' },
      servers: [{ url: documentedBaseUrl }],
      components: {
        securitySchemes: securitySchemes(documentedBaseUrl),
        // Every refusal's envelope; `error.reason` lists the error catalogue.
        schemas: { ErrorEnvelope: errorEnvelopeSchema() },
      },
    },
    // each operation's error responses (a `reason` enum per status), security and headers, derived from its route
    transform: openapiTransform(app),
  });
  if (deps.config.DOCS_ENABLED) await app.register(fastifySwaggerUi, { routePrefix: '/docs', staticCSP: true });
  await app.register(authPlugin);
  await app.register(apiKeyPlugin);
  await app.register(oauthPlugin);
  await app.register(accessPlugin);
  await app.register(rateLimitPlugin);
  await app.register(dispatchPlugin);
  await app.register(idempotencyPlugin);
  await app.register(healthRoutes);
  for (const group of routeGroups) await app.register(group);
  return app;
}
