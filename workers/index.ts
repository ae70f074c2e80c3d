import type { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { InvariantViolation } from '../domain/shared/errors.ts';
import type { Config } from '../infra/config.ts';
import { createMailer } from '../infra/mailer.ts';
import { startMailWorker } from './mail.ts';
import type { Venues } from '../infra/venues/port.ts';
import { startReconciliation, type ReconciliationQueries } from './reconciliation.ts';
import { startHousekeeping, type HousekeepingDeps } from './housekeeping.ts';
import { startTransferRecovery, type RecoveryDeps } from './transfers.ts';
import { startSignalWorker, type SignalQueries } from './signals.ts';
import { startWebhookWorker, type WebhookOutbox } from './webhooks.ts';
import type { Dispatcher } from '../commands/dispatch.ts';
import type { WebhookSender } from '../infra/webhook-sender.ts';

export interface Workers {
  /** the BullMQ workers and queues this role runs, each with its 'error' listener */
  parts: ReadonlyArray<Worker | Queue>;
  close(): Promise<void>;
}

/**
 * A listener for a BullMQ worker's or queue's 'error' event (its Redis connection failing, a lock
 * lost): logged, and the part goes on reconnecting. Without a listener Node throws the event and the
 * whole process dies with the first Redis hiccup.
 */
export const logQueueErrors = (logger: Logger, queue: string) => (err: Error) => logger.error({ err, queue }, 'queue error');

export interface WorkerDeps extends RecoveryDeps {
  config: Config;
  logger: Logger;
  venues: Venues;
  reconciliationQueries: ReconciliationQueries;
  signalQueries: SignalQueries;
  purgeExpired: HousekeepingDeps['purgeExpired'];
  dispatch: Dispatcher;
  webhooks: WebhookSender;
  webhookOutbox: WebhookOutbox;
}

/**
 * BullMQ's key prefix under the deployment's Redis key prefix (runtime.ts `keyPrefix`, ending in
 * ':'): BullMQ refuses ioredis keyPrefix, so it gets the same space through its own option.
 */
export function queuePrefix(keyPrefix: string): string {
  return `${keyPrefix}bull`;
}

export function bullConnection(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null });
}

export async function startWorkers(deps: WorkerDeps, keyPrefix: string): Promise<Workers> {
  const connection = bullConnection(deps.config.REDIS_URL);
  const prefix = queuePrefix(keyPrefix);
  const recovery = await startTransferRecovery(connection, prefix, deps);
  const housekeeping = await startHousekeeping(connection, prefix, deps);
  const reconciliation = await startReconciliation(connection, prefix, { ...deps, queries: deps.reconciliationQueries });
  const signals = await startSignalWorker(
    connection,
    prefix,
    {
      dispatch: deps.dispatch,
      clock: deps.clock,
      signalQueries: deps.signalQueries,
      sweepEveryMs: deps.config.TRANSFER_RECOVERY_INTERVAL_MS,
      watchEveryMs: deps.config.PRICE_WATCH_INTERVAL_MS,
    },
    { lockDurationMs: deps.config.SIGNAL_JOB_LOCK_MS },
  );
  const webhooks = await startWebhookWorker(connection, prefix, deps, keyPrefix);
  const workers: Worker[] = [
    startMailWorker(connection, prefix, createMailer(deps.config, deps.logger), deps.config.JWT_SECRET),
    recovery.worker,
    reconciliation.worker,
    signals.worker,
    housekeeping.worker,
    webhooks.worker,
  ];
  // an invariant broken inside a job is a bug that must page someone: error, not warn
  for (const w of workers)
    w.on('failed', (job, err) => deps.logger[err instanceof InvariantViolation ? 'error' : 'warn']({ err, queue: w.name, jobId: job?.id }, 'job failed'));
  const queues = [recovery.queue, reconciliation.queue, signals.queue, housekeeping.queue, webhooks.queue];
  for (const w of workers) w.on('error', logQueueErrors(deps.logger, w.name));
  for (const q of queues) q.on('error', logQueueErrors(deps.logger, q.name));
  return {
    parts: [...workers, ...queues],
    async close() {
      await webhooks.close();
      await Promise.all(workers.map((w) => w.close()));
      for (const q of queues) await q.close();
      connection.disconnect();
    },
  };
}
