import fp from 'fastify-plugin';
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, onResponseHookHandler } from 'fastify';
import { Redis } from 'ioredis';
import { refuse } from '../../domain/shared/errors.ts';
import { countInWindow } from '../../infra/redis.ts';
import { clientAddressDigest } from '../../infra/tokens.ts';
import type { AddressBudget, RefusalBudget } from '../types.ts';
import { epochMs } from '../../infra/clock.ts';

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

/** The refusal budgets' window: fixed, a minute, as the limiter's. */
const REFUSAL_WINDOW_MS = 60_000;

const hooksOf = <H>(hooks: H | H[] | undefined): H[] => (hooks ? (Array.isArray(hooks) ? hooks : [hooks]) : []);

function tooManyRefusals(reply: FastifyReply, message: string): Error {
  const retryAfterSeconds = Math.ceil((REFUSAL_WINDOW_MS - (epochMs() % REFUSAL_WINDOW_MS)) / 1000);
  // Refused before the body is read: the connection closes, so the rest of it is not read either.
  reply.header('retry-after', String(retryAfterSeconds)).header('connection', 'close');
  return refuse('RATE_LIMITED', message, { retryAfterSeconds });
}

interface RefusalCounting {
  redis: Redis;
  limits: { perAddress: number; perSubject: number };
  /** the request's address and subject keys in the current window (the address as a keyed digest) */
  keysOf(request: FastifyRequest, budget: RefusalBudget): readonly [string, string];
}

const subjectOf = (request: FastifyRequest, budget: RefusalBudget) => (request.params as Record<string, string>)[budget.subjectParam];

/** onRequest: over the address's budget, refused at once; over the subject's, refused at once without the signature header. */
function checkRefusals({ redis, limits, keysOf }: RefusalCounting, budget: RefusalBudget): onRequestHookHandler {
  return async function refusalBudget(request, reply) {
    const counts = await redis.mget(...keysOf(request, budget)).catch(() => [null, null]);
    const [byAddress, bySubject] = counts.map((n) => Number(n ?? 0));
    if (byAddress! >= limits.perAddress) throw tooManyRefusals(reply, `too many refused requests from this address: ${limits.perAddress} a minute`);
    if (bySubject! >= limits.perSubject && request.headers[budget.signatureHeader] === undefined) {
      throw tooManyRefusals(reply, `too many refused requests for this ${budget.subjectParam}: sign the request`);
    }
  };
}

/** onResponse: a 401 or 404, or another 4xx before the route authenticated the request, counts (a 404, for an unknown subject, by address only). */
function countRefusal({ redis, limits, keysOf }: RefusalCounting, budget: RefusalBudget): onResponseHookHandler {
  return async function countRefusal(request, reply) {
    const status = reply.statusCode;
    const refused = status === 401 || status === 404 || (status >= 400 && status < 500 && status !== 429 && !budget.authenticated(request));
    if (!refused) return;
    const [address, subject] = keysOf(request, budget);
    const counted = status === 404 ? [address] : [address, subject];
    const counts = await countInWindow(redis, counted, REFUSAL_WINDOW_MS).catch(() => null);
    const bySubject = counts?.at(-1);
    if (status !== 404 && bySubject === limits.perSubject) {
      request.log.warn({ [budget.subjectParam]: subjectOf(request, budget) }, 'refused requests over their budget: unsigned ones now answer 429');
    }
  };
}

/**
 * A route that authenticates its own callers (`config.refusalBudget`: the signal webhook) counts
 * what it refuses them: answers 401 and 404, and any other 4xx before it authenticated the request,
 * per client address (a keyed digest) and per subject (the agent; not for a 404: an unknown one).
 * Over the address's budget every request from it is refused 429 at once, before anything is read.
 * Over the subject's, only the requests without the signature header are: a correctly signed one
 * still goes on to be verified, so an attacker cannot starve an agent's real signals, and a forged
 * signature costs the route one check of a body bounded by its limits. Fail-open, as the limiter.
 */
function countRefusals(app: FastifyInstance, redis: Redis, limits: RefusalCounting['limits']): void {
  const masterSecret = app.deps.config.JWT_SECRET;
  const keys = new WeakMap<FastifyRequest, readonly [string, string]>();
  const keysOf = (request: FastifyRequest, budget: RefusalBudget) => {
    const window = Math.floor(epochMs() / REFUSAL_WINDOW_MS);
    const made =
      keys.get(request) ??
      ([
        `refused:address:${clientAddressDigest(masterSecret, request.ip)}:${window}`,
        `refused:${budget.subjectParam}:${subjectOf(request, budget)}:${window}`,
      ] as const);
    keys.set(request, made);
    return made;
  };
  const counting: RefusalCounting = { redis, limits, keysOf };
  app.addHook('onRoute', (route) => {
    const budget = route.config?.refusalBudget;
    if (!budget) return;
    route.onRequest = [checkRefusals(counting, budget), ...hooksOf(route.onRequest)];
    route.onResponse = [...hooksOf(route.onResponse), countRefusal(counting, budget)];
  });
}

/**
 * Per-tier rate limits (@fastify/rate-limit, counted in Redis so every API process shares one
 * budget): free, standard and premium requests a minute by the caller's tier, one budget per API
 * key, OAuth user or session user across routes; RATE_LIMIT_ANONYMOUS_PER_MIN per client address
 * for requests without credentials to the public routes that write (`config.anonymousBudget`), or a
 * route's own budget per address (GET /api/auth/username-exists); refusal budgets for a route that
 * authenticates its own callers (`config.refusalBudget`, above). X-RateLimit-Limit / -Remaining / -Reset on every
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
  countRefusals(app, redis, {
    perAddress: config.RATE_LIMIT_WEBHOOK_REFUSED_PER_ADDRESS_PER_MIN,
    perSubject: config.RATE_LIMIT_WEBHOOK_REFUSED_PER_AGENT_PER_MIN,
  });
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
      refuse(
        'RATE_LIMITED',
        `rate limit exceeded: ${context.max} requests a minute for this ${request.identity ? 'tier' : 'address'}; retry in ${context.after}`,
        {
          retryAfterSeconds: Math.ceil(context.ttl / 1000),
        },
      ),
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth', 'api-key'] });
