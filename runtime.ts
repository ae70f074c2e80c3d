import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { buildApp } from './api/app.ts';
import type { AppDeps } from './api/deps.ts';
import { notifyChanged } from './api/mcp/resource-watch.ts';
import { createDispatcher } from './commands/dispatch.ts';
import { createCaptcha } from './infra/captcha.ts';
import { systemClock, type Clock } from './infra/clock.ts';
import { ConfigError, socialGoogleOf, type Config } from './infra/config.ts';
import { statementKeys } from './infra/statement-keys.ts';
import { createPool, ensureDatabase } from './infra/db.ts';
import { createEventStore } from './infra/eventstore/index.ts';
import type { EventStore, RecordedEvent } from './infra/eventstore/port.ts';
import { randomIds, type Ids } from './infra/ids.ts';
import { createLogger } from './infra/logger.ts';
import { migrateAll } from './projections/migrations.ts';
import { createRedis } from './infra/redis.ts';
import { allProjectors } from './projections/index.ts';
import { ProjectionRunner, type RunnerOptions } from './projections/runner.ts';
import { legsAtVenue, transfersInFlight, unfollowedSeats } from './projections/transfers/queries.ts';
import { followerPools, poolOwnerOfStream, poolsGroupOf, realPools } from './projections/subscriptions/queries.ts';
import { unexecutedSignals } from './projections/signals/queries.ts';
import { liveTrades } from './projections/trades/queries.ts';
import { leveledLots } from './projections/wallets/queries.ts';
import { createReadModelPriceSource, markPrices } from './projections/market/queries.ts';
import { createSocialProvider } from './infra/social.ts';
import { createStoredSimulatedVenues } from './infra/venues/stored.ts';
import { createRemoteVenues } from './infra/venues/remote.ts';
import { createSimulatedSwaps } from './infra/venues/swaps.ts';
import { createIdempotencyKeys } from './infra/idempotency.ts';
import { purgeOAuthRecords } from './infra/oauth-store.ts';
import type { SwapRequest, Venues } from './infra/venues/port.ts';
import { announceApplied, createDeferredWrites, createReadYourWrites, listenApplied } from './projections/wait.ts';
import { createSnapshotWrites } from './projections/statements/fold-snapshots.ts';
import { createIdentityCache } from './infra/identity-cache.ts';
import type { SessionIdentity } from './projections/users/queries.ts';
import { userIdOfStream } from './domain/user/fields.ts';
import { apiKeyStream } from './domain/apikey/decide.ts';
import { closeEach } from './infra/close-each.ts';
import { bullConnection, logQueueErrors, queuePrefix, startWorkers, type Workers } from './workers/index.ts';
import { createQueuedMailer } from './workers/mail.ts';
import { createSignalQueue } from './workers/signals.ts';
import { createWebhookSender } from './infra/webhook-sender.ts';
import { webhookAgentsOf } from './projections/webhooks/projector.ts';
import { purgeWebhookDeliveries } from './projections/webhooks/queries.ts';
import { createStrategyCounts } from './projections/subscriptions/strategy-counts.ts';
import { publishWebhookNotice } from './infra/webhook-notices.ts';
import { createWebhookOutbox } from './workers/webhook-outbox.ts';

export interface Roles {
  api: boolean;
  projections: boolean;
  workers: boolean;
}

/** What `main.ts <role>` runs: `npm start` is `all`, `start:api`, `start:projections` and `start:workers` one role each. */
export const ROLES = {
  all: { api: true, projections: true, workers: true },
  api: { api: true, projections: false, workers: false },
  projections: { api: false, projections: true, workers: false },
  workers: { api: false, projections: false, workers: true },
} satisfies Record<string, Roles>;

export type RoleName = keyof typeof ROLES;

/** The roles of a role's name, or undefined for a name that is none. */
export const rolesOf = (name: string): Roles | undefined => (Object.hasOwn(ROLES, name) ? ROLES[name as RoleName] : undefined);

export interface Runtime {
  deps: AppDeps;
  app?: FastifyInstance;
  runner?: ProjectionRunner;
  workers?: Workers;
  /** address the API listens on, when it runs */
  url?: string;
  /** what every Redis key of this runtime starts with: `REDIS_PREFIX:` and the tests' own scope */
  keyPrefix: string;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  config: Config;
  roles: Roles;
  /** tests give each run its own Redis key space (under REDIS_PREFIX) */
  redisKeyPrefix?: string;
  /** tests swap the store (e.g. the EventStoreDB peer) */
  store?: EventStore;
  runnerOptions?: RunnerOptions;
  /** where log lines go (stdout by default); tests read them */
  logDestination?: DestinationStream;
  /** tests may fix the time and the ids */
  clock?: Clock;
  /** tests give the workers a venue they control */
  venues?: Venues;
  /** tests make some swaps fail (the reason) */
  failSwap?: (request: SwapRequest) => string | null;
  ids?: Ids;
  /** tests only: developer webhooks may reach a receiver on 127.0.0.1 whose certificate this authority signed */
  webhookReceiver?: { ca: string; allowLoopback: true };
}

/** the most webhook deliveries one housekeeping run deletes (it runs every HOUSEKEEPING_INTERVAL_MS) */
const WEBHOOK_PURGE_BATCH = 10_000;

/**
 * The venues the workers call: the one served at VENUE_URL, else the simulation with its books in
 * this service's PostgreSQL. Either is shared by every process and outlives them.
 */
function venuesOf(config: Config, clock: Clock, pool: ReturnType<typeof createPool>): Venues {
  if (config.VENUE_URL) return createRemoteVenues(config.VENUE_URL);
  return createStoredSimulatedVenues({
    pool,
    clock,
    prices: createReadModelPriceSource(pool),
    chainSettlementMs: config.VENUE_SIM_CHAIN_MS,
    bridgeDelays: { depositMs: config.VENUE_SIM_DEPOSIT_MS, reclaimMs: config.VENUE_SIM_RECLAIM_MS },
  });
}

/**
 * The statement keys made into keys at start, not at the first statement: a key of the right shape
 * that cannot be used (a wrong `d`, a curve mismatch) stops the start instead of answering 500 later.
 * The error names the setting, never its value.
 */
function usableStatementKeys(config: Config): void {
  try {
    statementKeys(config);
  } catch {
    throw new ConfigError('configuration: STATEMENT_SIGNING_KEYS holds a key that cannot be used to sign');
  }
}

/** The prefix of an API key's stream: its events' stream name is the group its remembered entry is dropped by (api/plugins/api-key.ts). */
const API_KEY_STREAM = apiKeyStream('');

/** The composition root: `npm start` runs all three roles in one process, or one role each. */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config, roles } = options;
  usableStatementKeys(config);
  const logger = createLogger(config, options.logDestination);
  if (config.VENUE === 'external') {
    logger.warn(
      { venue: config.VENUE },
      "VENUE=external: a real venue is configured (this service has no adapter for one yet); the simulated venue's admin routes (deposits, mark prices) answer 409 VENUE_NOT_SIMULATED",
    );
  }
  await ensureDatabase(config.DATABASE_URL);
  const pool = createPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  const store = options.store ?? createEventStore(config, pool);
  await migrateAll(pool, config, allProjectors);
  // Two deployments sharing a Redis must not share login codes, limits or jobs.
  const keyPrefix = `${config.REDIS_PREFIX}:${options.redisKeyPrefix ?? ''}`;
  const redis = createRedis(config.REDIS_URL, keyPrefix);
  // The connection retries by itself; meanwhile the requests that need it answer 503.
  redis.on('error', (err) => logger.warn({ err }, 'Redis connection failed; retrying'));

  const changedGroupOf = (e: RecordedEvent): string | [] => {
    const owner = poolOwnerOfStream(e.streamName);
    if (owner) return poolsGroupOf(owner);
    return userIdOfStream(e.streamName) ?? (e.streamName.startsWith(API_KEY_STREAM) ? e.streamName : []);
  };
  const identities = createIdentityCache<SessionIdentity>({
    redis,
    ttlMs: roles.api ? config.IDENTITY_CACHE_TTL_MS : 0,
    onerror: (err) => logger.warn({ err }, 'identity change notices failed; remembered identities are dropped meanwhile'),
  });
  // strategyCount remembered only where this process's runner applies what its API reads (docs/decisions.md, "Speed: writes, NOTIFY and strategyCount")
  const strategyCounts = createStrategyCounts({ pool, remember: Boolean(roles.api && roles.projections) });
  const runner = roles.projections
    ? new ProjectionRunner(store, pool, allProjectors, {
        onError: (stage, err, projector) =>
          projector
            ? logger.error({ err, stage, projector }, 'projector held back at its checkpoint; the others go on; retrying')
            : logger.error({ err, stage }, 'projection failed; retrying'),
        ...options.runnerOptions,
        // MCP clients watching a pool or agent hear of its change once the read models show it.
        onCommitted: (events, at) => {
          notifyChanged(redis, config.MCP_SESSION_TTL_SECONDS, events).catch((err) => logger.warn({ err }, 'MCP resource change notice failed'));
          // Remembered identities of the users and API keys the batch changed go, and the subscription lists of the users whose
          // pools it changed, here and in every API process.
          identities.changed(events.flatMap(changedGroupOf));
          try {
            strategyCounts.committed(events);
          } catch (err) {
            // the counts a batch could not update are read again: a failure here must not hold back the notices after it
            strategyCounts.forget();
            logger.warn({ err }, 'strategyCount memory could not take a batch; dropped');
          }
          // API processes without projections check their waiting writes now.
          announceApplied(redis, (err) => logger.warn({ err }, 'projection announcement failed'));
          // Workers start delivering what the batch queued for developer webhooks, not at the next sweep.
          publishWebhookNotice(redis, webhookAgentsOf(events), (err) => logger.warn({ err }, 'webhook outbox notice failed'));
          options.runnerOptions?.onCommitted?.(events, at);
        },
      })
    : undefined;
  await runner?.start();
  const queueConnection = bullConnection(config.REDIS_URL);
  const mailer = createQueuedMailer(queueConnection, queuePrefix(keyPrefix), config.JWT_SECRET, logQueueErrors(logger, 'mail'));

  const signals = createSignalQueue(queueConnection, queuePrefix(keyPrefix), logQueueErrors(logger, 'signals'));

  const socialSettings = socialGoogleOf(config);
  if (!socialSettings && !config.SOCIAL_LOGIN_DISABLED) {
    logger.warn(
      'social login is off (SOCIAL_GOOGLE_ISSUER, SOCIAL_GOOGLE_CLIENT_ID, SOCIAL_GOOGLE_CLIENT_SECRET unset): its routes answer 400 SOCIAL_LOGIN_DISABLED',
    );
  }
  const ids = options.ids ?? randomIds;
  const clock = options.clock ?? systemClock;
  // An API process without projections hears when a runner elsewhere commits, rather than polling for each write waiting.
  const appliedNotices =
    roles.api && !runner ? listenApplied(redis, (err) => logger.warn({ err }, 'projection announcements not heard; waiting writes poll meanwhile')) : undefined;
  const readYourWrites = createReadYourWrites({
    runner,
    ...(appliedNotices ? { notices: appliedNotices } : {}),
    onerror: (err) => logger.warn({ err }, 'reading the checkpoints for waiting writes failed; read again at the next announcement or poll'),
    pool,
    projectorNames: allProjectors.map((p) => p.name),
    timeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
  });
  const swaps = createSimulatedSwaps({
    pool,
    prices: createReadModelPriceSource(pool),
    delayMs: config.VENUE_SIM_SWAP_MS,
    ...(options.failSwap ? { failSwap: options.failSwap } : {}),
  });
  const deps: AppDeps = {
    config,
    pool,
    store,
    redis,
    logger,
    captcha: createCaptcha(config, logger),
    clock,
    ids,
    swaps,
    dispatch: createDispatcher({
      store,
      redis,
      mailer,
      ids,
      swaps,
      config,
      signals,
      ...(socialSettings ? { social: createSocialProvider(socialSettings) } : {}),
    }),
    signals,
    webhooks: createWebhookSender({ timeoutMs: config.WEBHOOK_TIMEOUT_MS, allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK, ...options.webhookReceiver }),
    readYourWrites,
    identities,
    strategyCounts,
    snapshotWrites: createSnapshotWrites(),
    deferredWrites: createDeferredWrites({
      redis,
      settle: readYourWrites,
      projections: runner ?? null,
      boundMs: config.READ_YOUR_WRITES_DEFER_LAG_MS,
      // at least as long as a remembered users/me document lives, so no memory from before a write outlives its record
      ttlMs: Math.max(2 * config.READ_YOUR_WRITES_TIMEOUT_MS, config.IDENTITY_CACHE_TTL_MS),
    }),
  };

  const idempotencyKeys = createIdempotencyKeys(pool, { ttlMs: config.IDEMPOTENCY_TTL_MS, leaseMs: config.IDEMPOTENCY_LEASE_MS });
  const queries = {
    transfersInFlight: (before: Date, limit: number) => transfersInFlight(pool, before, limit),
    unfollowedSeats: (before: Date, limit: number) => unfollowedSeats(pool, before, limit),
  };
  // Idempotency-Keys and OAuth records past their retention (codes, tokens, sessions, grants; clients with what was issued to them);
  // webhook deliveries done (delivered or given up) for WEBHOOK_RETENTION_DAYS, a bounded batch a run.
  const webhooksDoneBefore = (now: Date) => new Date(now.getTime() - config.WEBHOOK_RETENTION_DAYS * 24 * 3600_000);
  const purgeExpired = async (now: Date) =>
    (await idempotencyKeys.purge(now)) +
    (await purgeOAuthRecords(pool, now)) +
    (await purgeWebhookDeliveries(pool, webhooksDoneBefore(now), WEBHOOK_PURGE_BATCH));
  const workers = roles.workers
    ? await startWorkers(
        {
          ...deps,
          queries,
          purgeExpired,
          webhookOutbox: createWebhookOutbox(pool, config.JWT_SECRET),
          venues: options.venues ?? venuesOf(config, clock, pool),
          reconciliationQueries: { legsAtVenue: (after, limit) => legsAtVenue(pool, after, limit), realPools: (after, limit) => realPools(pool, after, limit) },
          signalQueries: {
            followerPools: (agentId) => followerPools(pool, agentId),
            unexecutedSignals: (before, limit) => unexecutedSignals(pool, before, limit),
            liveTrades: (after, limit) => liveTrades(pool, after, limit),
            markPrices: () => markPrices(pool),
            leveledLots: (after, limit) => leveledLots(pool, after, limit),
          },
        },
        keyPrefix,
      )
    : undefined;
  let app: FastifyInstance | undefined;
  let url: string | undefined;
  if (roles.api) {
    app = await buildApp(deps);
    url = await app.listen({ port: config.PORT, host: config.HOST });
  }

  return {
    deps,
    app,
    runner,
    workers,
    url,
    keyPrefix,
    close: () =>
      closeEach([
        ['the API', () => app?.close()],
        ['the statement snapshots', () => deps.snapshotWrites.idle()],
        ['the workers', () => workers?.close()],
        ['the projectors', () => runner?.stop()],
        ['the mail outbox', () => mailer.close()],
        ['the signal queue', () => signals.close()],
        ['the queue connection', () => queueConnection.disconnect()],
        ['the event store', () => store.close()],
        ['the identity notices', () => identities.close()],
        ['the projection announcements', () => appliedNotices?.close()],
        ['Redis', () => redis.disconnect()],
        ['PostgreSQL', () => pool.end()],
      ]),
  };
}
