// Housekeeping: a queue of its own whose repeatable `purge` deletes what is past its retention:
// Idempotency-Keys (manual trades' keys) and OAuth records (codes, tokens, sessions, grants;
// registered clients with what was issued to them). Apart from transfer recovery, so that a slow
// purge never delays the sweep that finishes interrupted transfers, and each runs at its own pace.
import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Clock } from '../infra/clock.ts';
import type { Config } from '../infra/config.ts';

export const HOUSEKEEPING_QUEUE = 'housekeeping';
const PURGE_SCHEDULER = 'housekeeping-purge';

export interface HousekeepingDeps {
  clock: Clock;
  config: Pick<Config, 'HOUSEKEEPING_INTERVAL_MS'>;
  /** deletes what is past its retention at `now`; how many rows */
  purgeExpired(now: Date): Promise<number>;
}

function processor(deps: HousekeepingDeps) {
  return async (job: Job): Promise<number> => {
    if (job.name !== 'purge') throw new Error(`unknown ${HOUSEKEEPING_QUEUE} job ${job.name}`);
    return deps.purgeExpired(deps.clock.now());
  };
}

/** The queue, its repeatable purge (every HOUSEKEEPING_INTERVAL_MS; one scheduler whatever the number of processes) and the worker. */
export async function startHousekeeping(connection: ConnectionOptions, prefix: string, deps: HousekeepingDeps) {
  const queue = new Queue(HOUSEKEEPING_QUEUE, { connection, prefix });
  await queue.upsertJobScheduler(
    PURGE_SCHEDULER,
    { every: deps.config.HOUSEKEEPING_INTERVAL_MS },
    { name: 'purge', opts: { removeOnComplete: true, removeOnFail: { count: 100 } } },
  );
  // one purge at a time: two would delete the same rows
  const worker = new Worker(HOUSEKEEPING_QUEUE, processor(deps), { connection, prefix, concurrency: 1 });
  return { queue, worker };
}
