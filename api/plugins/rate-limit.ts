import fp from 'fastify-plugin';
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { refuse } from '../../domain/shared/errors.ts';
import { clientAddressDigest } from '../../infra/tokens.ts';
import type { AddressBudget } from '../types.ts';

/** The budget of its own a public route counts callers without credentials in, if it has one. */
const ownBudget = (request: FastifyRequest): AddressBudget | undefined => {
  const budget = request.routeOptions.config?.anonymousBudget;
  return typeof budget === 'object' ? budget : undefined;
};

/**
 * The caller's budget: its API key's, its OAuth user's, or its session user's; without credentials,
 * on a public route that writes, its client address's (a keyed digest, never the address itself),
 * or its address's in the route's own budget; other anonymous requests are not counted.
 */
const budgetOf = (request: FastifyRequest, masterSecret: string): string => {
  const identity = request.identity;
  if (!identity) return `${ownBudget(request)?.name ?? 'address'}:${clientAddressDigest(masterSecret, request.ip)}`;
  if (identity.mode === 'apiKey') return `key:${identity.keyId}`;
  return identity.mode === 'oauth' ? `oauth:${identity.userId}` : `user:${identity.userId}`;
};
const STARTUP_WAIT_MS = 2_000;

async function waitUntilReady(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Every route that writes which this scope registers afterwards counts callers without credentials
 * per client address (reads are not counted, unless a route names a budget of its own).
 */
export function countAnonymousCallers(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.config?.anonymousBudget || methods.every((m) => READS.has(m))) return;
    route.config = { ...route.config, anonymousBudget: true };
  });
}

const counted = (request: FastifyRequest) => request.identity !== null || request.routeOptions.config?.anonymousBudget !== undefined;

/**
 * Per-tier rate limits (@fastify/rate-limit, counted in Redis so every API process shares one
 * budget): free, standard and premium requests a minute by the caller's tier, one budget per API
 * key, OAuth user or session user across routes; RATE_LIMIT_ANONYMOUS_PER_MIN per client address
 * for requests without credentials to the public routes that write (`config.anonymousBudget`), or a
 * route's own budget per address (GET /api/auth/username-exists). X-RateLimit-Limit / -Remaining / -Reset on every
 * authenticated answer; 429 RATE_LIMITED with Retry-After beyond. Fail-open: the limiter has its
 * own Redis connection with no offline queue and a short command time-out, and a Redis error or
 * time-out lets the request through (its headers then show the whole budget) rather than stalling every request.
 * RATE_LIMIT_ENABLED=false registers nothing (the access bench's baseline).
 */
async function rateLimitPlugin(app: FastifyInstance): Promise<void> {
  const { config } = app.deps;
  if (!config.RATE_LIMIT_ENABLED) return;
  const limits: Record<string, number> = {
    free: config.RATE_LIMIT_FREE_PER_MIN,
    standard: config.RATE_LIMIT_STANDARD_PER_MIN,
    premium: config.RATE_LIMIT_PREMIUM_PER_MIN,
  };
  const redis = new Redis(config.RATE_LIMIT_REDIS_URL ?? config.REDIS_URL, {
    keyPrefix: app.deps.redis.options.keyPrefix ?? '',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: config.RATE_LIMIT_REDIS_TIMEOUT_MS,
    lazyConnect: false,
  });
  redis.on('error', () => {}); // an outage is the limiter's to skip, not the process's to crash on
  app.addHook('onClose', async () => redis.disconnect());
  // Without an offline queue, a request before the connection is up would go uncounted: the API
  // waits for it a moment at start (and starts anyway, failing open, when Redis is away).
  await waitUntilReady(redis, STARTUP_WAIT_MS);
  await app.register(fastifyRateLimit, {
    global: true,
    // Counted once the caller is proven: after an API key's signature (api-key.ts, preValidation),
    // so whoever holds a key without its secret cannot spend the key's budget.
    hook: 'preValidation',
    redis,
    nameSpace: 'ratelimit:',
    skipOnError: true,
    timeWindow: 60_000,
    allowList: (request) => !counted(request),
    keyGenerator: (request) => budgetOf(request, config.JWT_SECRET),
    max: async (request) =>
      request.identity ? (limits[request.identity.tier] ?? limits.free!) : (ownBudget(request)?.perMinute ?? config.RATE_LIMIT_ANONYMOUS_PER_MIN),
    errorResponseBuilder: (request, context) =>
      refuse('RATE_LIMITED', `rate limit exceeded: ${context.max} requests a minute for this ${request.identity ? 'tier' : 'address'}; retry in ${context.after}`, {
        retryAfterSeconds: Math.ceil(context.ttl / 1000),
      }),
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth', 'api-key'] });
