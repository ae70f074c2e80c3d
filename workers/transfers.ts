// Transfer recovery: finishes (or compensates) transfers a crash interrupted after their debit,
// and frees beta seats whose follow stopped before any debit. A repeatable `sweep` finds
// candidates (through the queries port: the transfers read model) and queues one job per fact, its
// job id derived from the fact so a duplicate is a no-op; the jobs dispatch commands whose steps
// are idempotent, so a retried or repeated job changes nothing.
import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { z } from 'zod';
import type { Dispatch } from '../commands/dispatch.ts';
import type { CommandMetadata } from '../domain/shared/decider.ts';
import type { Clock } from '../infra/clock.ts';
import type { Config } from '../infra/config.ts';

export const TRANSFER_QUEUE = 'transfer-recovery';
export const RECOVERY_ACTOR = 'system:transfer-recovery';
const SWEEP_SCHEDULER = 'transfer-recovery-sweep';
const SWEEP_BATCH = 100;

export const resumeTransferJob = z.object({
  transferId: z.string().min(1),
  sourceStream: z.string().min(1),
  correlationId: z.string().min(1),
  debitEventId: z.string().min(1),
});
export const releaseSeatJob = z.object({ agentId: z.string().min(1), userId: z.string().min(1) });

/** Where the sweep finds its candidates (implemented by projections/transfers/queries.ts). */
export interface RecoveryQueries {
  transfersInFlight(before: Date, limit: number): Promise<Array<z.infer<typeof resumeTransferJob>>>;
  unfollowedSeats(before: Date, limit: number): Promise<Array<{ agentId: string; userId: string; takenAt: Date }>>;
}

export interface RecoveryDeps {
  dispatch: Dispatch;
  clock: Clock;
  config: Pick<Config, 'TRANSFER_RECOVERY_GRACE_MS' | 'TRANSFER_RECOVERY_INTERVAL_MS'>;
  queries: RecoveryQueries;
}

const JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true, // a later sweep may queue the same fact again: the command is a no-op then
  removeOnFail: { age: 3600 }, // kept an hour for inspection; the sweep queues the fact again afterwards
} as const;

const metadataOf = (deps: RecoveryDeps, correlationId: string, causationId?: string): CommandMetadata => ({
  now: deps.clock.now(),
  actor: RECOVERY_ACTOR,
  correlationId,
  ...(causationId ? { causationId } : {}),
});

/** Finishes or compensates the transfer; its events belong to the interrupted request, caused by the debit. */
export async function resumeTransfer(deps: RecoveryDeps, job: z.infer<typeof resumeTransferJob>) {
  const { result } = await deps.dispatch({
    type: 'ResumeTransfer',
    data: { transferId: job.transferId, sourceStream: job.sourceStream },
    metadata: metadataOf(deps, job.correlationId, job.debitEventId),
  });
  return result.status;
}

/** Releases the seat when its holder has no pool of the agent and no debit waiting to open one. */
export async function releaseSeat(deps: RecoveryDeps, job: z.infer<typeof releaseSeatJob>, jobId = 'direct') {
  const { result } = await deps.dispatch({ type: 'ReleaseOrphanSeat', data: job, metadata: metadataOf(deps, `${TRANSFER_QUEUE}/${jobId}`) });
  return result.released;
}

/** A job id from a fact's id: BullMQ refuses ':' in ids, and one refused id would fail the whole sweep's batch. */
export const jobIdOf = (prefix: string, id: string): string => `${prefix}-${id.replaceAll(':', '%3A')}`;

/** Queues a job for every candidate older than the grace period (a request in progress is younger). */
async function sweep(deps: RecoveryDeps, queue: Queue): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - deps.config.TRANSFER_RECOVERY_GRACE_MS);
  const [transfers, seats] = await Promise.all([deps.queries.transfersInFlight(before, SWEEP_BATCH), deps.queries.unfollowedSeats(before, SWEEP_BATCH)]);
  await queue.addBulk([
    ...transfers.map((t) => ({ name: 'resume-transfer', data: t, opts: { ...JOB_OPTIONS, jobId: jobIdOf('resume', t.transferId) } })),
    ...seats.map(({ agentId, userId, takenAt }) => ({
      name: 'release-seat',
      data: { agentId, userId },
      opts: { ...JOB_OPTIONS, jobId: `release-seat-${agentId}-${userId}-${takenAt.getTime()}` },
    })),
  ]);
  return transfers.length + seats.length;
}

function processor(deps: RecoveryDeps, queue: Queue) {
  return async (job: Job): Promise<unknown> => {
    switch (job.name) {
      case 'sweep':
        return sweep(deps, queue);
      case 'resume-transfer':
        return resumeTransfer(deps, resumeTransferJob.parse(job.data));
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
