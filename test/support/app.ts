import { closeEach } from '../../infra/close-each.ts';
import type { SwapRequest, Venues } from '../../infra/venues/port.ts';
import type { Clock } from '../../infra/clock.ts';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../infra/config.ts';
import type { AppDeps } from '../../api/deps.ts';
import { buildApp } from '../../api/app.ts';
import type { Dispatched } from '../../commands/dispatch.ts';
import type { Loaded } from '../../commands/handle.ts';
import type { CommandMap, CommandType } from '../../commands/command-map.ts';
import type { Aggregate, Command, DomainEvent } from '../../domain/shared/decider.ts';
import { createEsdbEventStore } from '../../infra/eventstore/esdb.ts';
import { startRuntime, type Roles, type Runtime } from '../../runtime.ts';
import type { RunnerOptions } from '../../projections/runner.ts';
import { freshDatabase, type TestDatabase } from './db.ts';
import { forgetSchemaTemplate, schemaTemplate } from './schema-template.ts';
import { startEsdbPeer, type EsdbPeer } from './esdb-peer/index.ts';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from './smtp.ts';

export interface TestAppOptions {
  /** `esdb` runs the app on the protocol-level EventStoreDB peer (test/support/esdb-peer) */
  eventStore?: 'postgres' | 'esdb';
  /** environment overrides, as strings like the real environment */
  config?: Record<string, string>;
  runnerOptions?: RunnerOptions;
  /** durable commits (benchmarks); tests skip the flush to disk */
  durable?: boolean;
  /**
   * start on an empty database, so the service creates its whole schema at start as in production
   * (by default the database is a copy of the migrated schema, test/support/schema-template.ts)
   */
  emptyDatabase?: boolean;
  /** collect log lines (sets LOG_LEVEL to info unless config says otherwise) */
  captureLogs?: boolean;
  /** the test's own Redis key scope (under REDIS_PREFIX); random unless two apps must share one */
  redisKeyPrefix?: string;
  /** the venues the workers call (a simulation on a clock the test moves) */
  venues?: Venues;
  /** which swaps the simulated venue fails, with the reason */
  failSwap?: (request: SwapRequest) => string | null;
  /** which roles run in the test's process (all by default); e.g. no workers when a child process is the worker */
  roles?: Partial<Roles>;
  /** the service's clock (the system clock by default) */
  clock?: Clock;
  /** developer webhooks may reach this receiver on 127.0.0.1 (its certificate's authority) */
  webhookReceiver?: { ca: string; allowLoopback: true };
}

export interface TestApp {
  url: string;
  deps: AppDeps;
  runtime: Runtime;
  databaseUrl: string;
  /** the test's Redis key scope; every key of the app starts with `runtime.keyPrefix` */
  redisKeyPrefix: string;
  mails: ReceivedMail[];
  /** log lines, when captureLogs was set */
  logs: string[];
  waitForMail(to: string, timeoutMs?: number): Promise<ReceivedMail>;
  /**
   * Stops the service (API, projectors, workers, every connection), as a process that exits, and
   * starts it again on the same database, Redis key scope and configuration: `url`, `deps` and
   * `runtime` are then the new service's. `whileDown` runs in between (time that passes meanwhile).
   */
  restart(whileDown?: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/**
 * The real service for one test file: Fastify listening on 127.0.0.1, its own PostgreSQL
 * database, its own Redis key space, an in-process SMTP server, projectors and workers running
 * (unless `roles` says otherwise).
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const db = options.emptyDatabase
    ? await freshDatabase('app', { durable: options.durable })
    : await appDatabase(options.eventStore ?? 'postgres', options.durable);
  await db.pool.end();
  // What is started is closed again when a later step fails: an SMTP server or peer left listening
  // would keep the test process alive until tap's time-out.
  let smtp: TestSmtpServer | undefined;
  let peer: EsdbPeer | undefined;
  try {
    smtp = await startSmtpServer();
    peer = options.eventStore === 'esdb' ? await startEsdbPeer() : undefined;
    return await startTestAppOn(db, smtp, peer, options);
  } catch (err) {
    await peer?.stop();
    await smtp?.close();
    await db.drop();
    throw err;
  }
}

/** startTestApp's service, on the database, SMTP server and peer (if any) it started for it. */
async function startTestAppOn(db: TestDatabase, smtp: TestSmtpServer, peer: EsdbPeer | undefined, options: TestAppOptions): Promise<TestApp> {
  const redisKeyPrefix = options.redisKeyPrefix ?? `test:${randomBytes(6).toString('hex')}:`;
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: options.captureLogs ? 'info' : (process.env.TEST_LOG_LEVEL ?? 'silent'),
    DATABASE_URL: db.url,
    DATABASE_POOL_SIZE: '6',
    // Tests make far more requests a minute than a tier allows; the rate-limit test sets its own.
    RATE_LIMIT_FREE_PER_MIN: '1000000',
    RATE_LIMIT_STANDARD_PER_MIN: '1000000',
    RATE_LIMIT_PREMIUM_PER_MIN: '1000000',
    RATE_LIMIT_ANONYMOUS_PER_MIN: '1000000',
    RATE_LIMIT_USERNAME_CHECKS_PER_MIN: '1000000',
    RATE_LIMIT_WEBHOOK_REFUSED_PER_ADDRESS_PER_MIN: '1000000',
    RATE_LIMIT_WEBHOOK_REFUSED_PER_AGENT_PER_MIN: '1000000',
    RATE_LIMIT_STATEMENTS_PER_MIN: '1000000',
    LOOKUP_PER_ADDRESS_PER_HOUR: '1000000',
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    SMTP_URL: smtp.url,
    EVENT_STORE: peer ? 'esdb' : 'postgres',
    ...(peer ? { EVENTSTORE_URL: peer.url } : {}),
    // The workers' repeating sweeps (price watcher, transfer recovery and signal sweep,
    // reconciliation, housekeeping, webhook deliveries) run hourly instead of every 1 to 5 s in every test
    // app of the suite: a test that exercises one sets its interval.
    PRICE_WATCH_INTERVAL_MS: '3600000',
    TRANSFER_RECOVERY_INTERVAL_MS: '3600000',
    RECONCILIATION_INTERVAL_MS: '3600000',
    HOUSEKEEPING_INTERVAL_MS: '3600000',
    WEBHOOK_SWEEP_INTERVAL_MS: '3600000',
    // and deliveries start at the sweep only, not as soon as projected: a test that exercises that sets it
    WEBHOOK_DELIVER_ON_PROJECTION: 'false',
    // A request waits for its own writes' projection up to 5 s in service; a test app on a loaded
    // machine (the suite's parallel files, a bench's load) waits as long as it takes, up to 30 s, so
    // its next request never reads before its own write (a session not yet projected answered 401).
    READ_YOUR_WRITES_TIMEOUT_MS: '30000',
    ...options.config,
  });
  const logs: string[] = [];
  const start = () =>
    startRuntime({
      logDestination: options.captureLogs ? { write: (line: string) => void logs.push(line) } : undefined,
      config,
      roles: { api: true, projections: true, workers: true, ...options.roles },
      redisKeyPrefix,
      store: peer ? createEsdbEventStore(peer.url) : undefined,
      runnerOptions: options.runnerOptions,
      venues: options.venues,
      failSwap: options.failSwap,
      clock: options.clock,
      webhookReceiver: options.webhookReceiver,
    });
  let runtime = await start();
  let closed = false;
  return {
    get url() {
      return runtime.url!;
    },
    get deps() {
      return runtime.deps;
    },
    get runtime() {
      return runtime;
    },
    databaseUrl: db.url,
    redisKeyPrefix,
    mails: smtp.mails,
    logs,
    waitForMail: (to, timeoutMs) => smtp.waitForMail(to, timeoutMs),
    async restart(whileDown) {
      await runtime.close();
      await whileDown?.();
      runtime = await start();
    },
    async close() {
      if (closed) return;
      closed = true;
      // Every part even when one fails: a failed service close must not leave the peer listening or the database behind.
      await closeEach([
        ['the service', () => runtime.close()],
        ['the SMTP server', () => smtp.close()],
        ['the EventStoreDB peer', () => peer?.stop()],
        ['the database', () => db.drop()],
      ]);
    },
  };
}

/** The app's database: a copy of the migrated schema (the service then finds its migrations applied). */
async function appDatabase(eventStore: 'postgres' | 'esdb', durable?: boolean) {
  const template = await schemaTemplate(eventStore);
  try {
    return await freshDatabase('app', { durable, template });
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw err;
    // the template went away (dropped as stale by another run): build it again
    forgetSchemaTemplate(template);
    return freshDatabase('app', { durable, template: await schemaTemplate(eventStore) });
  }
}

/** fetch against the test app with JSON in and out. */
export async function api(
  app: Pick<TestApp, 'url'>,
  method: string,
  path: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  } else if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${app.url}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // non-JSON bodies (metrics, docs) stay text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Sends a command through the app's dispatcher as `actor`, and waits until the read models show it. */
export async function dispatch<T extends CommandType>(
  app: Pick<TestApp, 'deps'>,
  type: T,
  data: CommandMap[T]['data'],
  actor = 'test',
): Promise<Dispatched<CommandMap[T]['result']>> {
  const metadata = { now: app.deps.clock.now(), actor, correlationId: `test-${app.deps.ids.uuid()}` };
  const dispatched = await app.deps.dispatch({ type, data, metadata });
  await app.deps.readYourWrites(dispatched.position);
  return dispatched;
}

/** The current state of one aggregate instance, read from its stream. */
export function loadState<C extends Command, S, E extends DomainEvent>(
  app: Pick<TestApp, 'deps'>,
  aggregate: Aggregate<C, S, E>,
  id: string,
): Promise<Loaded<S>> {
  return app.deps.dispatch.room.load(aggregate.streamOf(id), aggregate);
}

/**
 * A second HTTP API on the test app's own dependencies (database, Redis, dispatcher, projections)
 * with some configuration changed: for a setting read when the app is built, without starting a
 * whole other service.
 */
export async function apiWithConfig(app: Pick<TestApp, 'deps'>, overrides: Partial<AppDeps['config']>): Promise<{ url: string; close(): Promise<void> }> {
  const server = await buildApp({ ...app.deps, config: { ...app.deps.config, ...overrides } });
  const url = await server.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => server.close() };
}
