// Transfer recovery: completes follows that stopped half-way (a crash between the appends of
// commands/subscriptions/subscribe.ts). A repeatable `sweep` finds candidates in the transfers read
// model and queues one job per fact (job id from the fact, so a duplicate is a no-op); the jobs
// dispatch commands whose deciders are idempotent, so a retried or repeated job changes nothing.
import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { z } from 'zod';
import type { AppDeps } from '../api/deps.ts';
import type { CommandContext } from '../commands/handle.ts';
import { completeTransfer } from '../commands/transfers/complete-transfer.ts';
import { releaseOrphanSeat } from '../commands/transfers/release-orphan-seat.ts';
import { uncreditedTransfers, unfollowedSeats } from '../projections/transfers/queries.ts';

export const TRANSFER_QUEUE = 'transfer-recovery';
export const RECOVERY_ACTOR = 'system:transfer-recovery';
const SWEEP_SCHEDULER = 'transfer-recovery-sweep';
const SWEEP_BATCH = 100;

export const completeTransferJob = z.object({ userId: z.string().min(1), transferId: z.string().min(1) });
export const releaseSeatJob = z.object({ agentId: z.string().min(1), userId: z.string().min(1) });

const JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true, // a later sweep may queue the same fact again: the command is a no-op then
  removeOnFail: { age: 3600 }, // kept an hour for inspection; the sweep queues the fact again afterwards
} as const;

export type RecoveryDeps = Pick<AppDeps, 'store' | 'pool' | 'config' | 'clock'>;

const contextOf = (deps: RecoveryDeps, jobId: string | undefined): CommandContext => ({
  correlationId: `${TRANSFER_QUEUE}/${jobId ?? 'direct'}`,
  actor: RECOVERY_ACTOR,
  now: deps.clock(),
});

/** Credits the pool with the wallet's amount for the transfer; returns how many events it appended. */
export async function recoverTransfer(deps: RecoveryDeps, data: z.infer<typeof completeTransferJob>, jobId?: string): Promise<number> {
  const result = await completeTransfer(deps.store, data.userId, data.transferId, contextOf(deps, jobId));
  return result.events.length;
}

/** Releases the seat when its holder has no pool of the agent and no debit waiting to open one. */
export async function releaseSeat(deps: RecoveryDeps, data: z.infer<typeof releaseSeatJob>, jobId?: string): Promise<number> {
  const result = await releaseOrphanSeat(deps.store, data.agentId, data.userId, contextOf(deps, jobId));
  return result?.events.length ?? 0;
}

/** Queues a job for every candidate older than the grace period (a follow in progress is younger). */
async function sweep(deps: RecoveryDeps, queue: Queue): Promise<number> {
  const before = new Date(deps.clock().getTime() - deps.config.TRANSFER_RECOVERY_GRACE_MS);
  const [transfers, seats] = await Promise.all([
    uncreditedTransfers(deps.pool, before, SWEEP_BATCH),
    unfollowedSeats(deps.pool, before, SWEEP_BATCH),
  ]);
  await queue.addBulk([
    ...transfers.map((t) => ({ name: 'complete-transfer', data: t, opts: { ...JOB_OPTIONS, jobId: `complete-${t.transferId}` } })),
    ...seats.map(({ agentId, userId, takenAt }) => ({
      name: 'release-seat',
      data: { agentId, userId },
      opts: { ...JOB_OPTIONS, jobId: `release-seat-${agentId}-${userId}-${takenAt.getTime()}` },
    })),
  ]);
  return transfers.length + seats.length;
}

function processor(deps: RecoveryDeps, queue: Queue) {
  return async (job: Job): Promise<number> => {
    switch (job.name) {
      case 'sweep':
        return sweep(deps, queue);
      case 'complete-transfer':
        return recoverTransfer(deps, completeTransferJob.parse(job.data), job.id);
      case 'release-seat':
        return releaseSeat(deps, releaseSeatJob.parse(job.data), job.id);
      default:
        throw new Error(`unknown ${TRANSFER_QUEUE} job ${job.name}`);
    }
  };
}

/** The queue, its repeatable sweep (every TRANSFER_RECOVERY_INTERVAL_MS) and the worker. */
export async function startTransferRecovery(connection: ConnectionOptions, prefix: string, deps: RecoveryDeps) {
  const queue = new Queue(TRANSFER_QUEUE, { connection, prefix });
  // Upserted by every worker process: one scheduler whatever the number of processes.
  await queue.upsertJobScheduler(
    SWEEP_SCHEDULER,
    { every: deps.config.TRANSFER_RECOVERY_INTERVAL_MS },
    { name: 'sweep', opts: { removeOnComplete: true, removeOnFail: { count: 100 } } },
  );
  const worker = new Worker(TRANSFER_QUEUE, processor(deps, queue), { connection, prefix, concurrency: 4 });
  return { queue, worker };
}
