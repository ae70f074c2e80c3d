// Signal execution: a received signal is a job (id derived from the agent and the signal, so a
// repeated delivery is the same job) that executes it in every follower pool through one
// `ExecuteSignal` command. A worker killed mid-way leaves the job stalled: BullMQ hands it to
// another worker, whose run finds what the first one did (trade ids are stable) and goes on.
// A repeatable sweep re-queues signals received and never executed (a crash between the record and
// the queue). The webhook waits for the job (bounded) through `waitFor`.
import { Queue, QueueEvents, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { z } from 'zod';
import type { Dispatch } from '../commands/dispatch.ts';
import type { SignalJobs } from '../commands/signals/receive.ts';
import type { SignalExecuted } from '../domain/signal/events.ts';
import type { Clock } from '../infra/clock.ts';

export const SIGNAL_QUEUE = 'signal-execution';
export const SIGNAL_ACTOR = 'system:signal-worker';
const SWEEP_SCHEDULER = 'signal-execution-sweep';

export const executeSignalJob = z.object({ agentId: z.string().min(1), signalKey: z.string().min(1), correlationId: z.string().min(1) });

const jobIdOf = (agentId: string, signalKey: string) => `signal-${agentId}-${signalKey}`;

const JOB_OPTIONS = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 3600 }, // kept an hour: a repeated delivery waiting for it finds it
  removeOnFail: { age: 24 * 3600 },
} as const;

/** Where the worker reads an agent's followers and the signals left unexecuted (projections). */
export interface SignalQueries {
  followerPools(agentId: string): Promise<string[]>;
  /** signals received before `before` and not executed */
  unexecutedSignals(before: Date, limit: number): Promise<Array<{ agentId: string; signalKey: string }>>;
}

export interface SignalWorkerDeps {
  dispatch: Dispatch;
  clock: Clock;
  signalQueries: SignalQueries;
  /** how often the sweep looks for signals never executed, and how old they must be */
  sweepEveryMs: number;
}

/** The queue side, for the API: hand a signal over, and wait for its execution. */
export interface SignalQueue extends SignalJobs {
  /** the execution's record once the job is done within `timeoutMs`, else null */
  waitFor(agentId: string, signalKey: string, timeoutMs: number): Promise<SignalExecuted | null>;
  close(): Promise<void>;
}

export function createSignalQueue(connection: ConnectionOptions, prefix: string): SignalQueue {
  const queue = new Queue(SIGNAL_QUEUE, { connection, prefix });
  let events: QueueEvents | null = null;
  const queueEvents = () => (events ??= new QueueEvents(SIGNAL_QUEUE, { connection, prefix }));
  return {
    async enqueue(job) {
      await queue.add('execute-signal', job, { ...JOB_OPTIONS, jobId: jobIdOf(job.agentId, job.signalKey) });
    },
    async waitFor(agentId, signalKey, timeoutMs) {
      const listening = queueEvents();
      await listening.waitUntilReady();
      const job = await queue.getJob(jobIdOf(agentId, signalKey));
      if (!job) return null;
      try {
        const result = (await job.waitUntilFinished(listening, timeoutMs)) as { executed: SignalExecuted } | undefined;
        return result?.executed ?? null;
      } catch {
        return null; // timed out, or the attempt failed (it is retried): the inbox will show the outcome
      }
    },
    async close() {
      await events?.close();
      await queue.close();
    },
  };
}

async function execute(deps: SignalWorkerDeps, job: z.infer<typeof executeSignalJob>) {
  const poolIds = await deps.signalQueries.followerPools(job.agentId);
  const { result } = await deps.dispatch({
    type: 'ExecuteSignal',
    data: { agentId: job.agentId, signalKey: job.signalKey, poolIds },
    metadata: { now: deps.clock.now(), actor: SIGNAL_ACTOR, correlationId: job.correlationId },
  });
  return result;
}

async function sweep(deps: SignalWorkerDeps, queue: Queue): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - deps.sweepEveryMs);
  const signals = await deps.signalQueries.unexecutedSignals(before, 100);
  await queue.addBulk(
    signals.map(({ agentId, signalKey }) => ({
      name: 'execute-signal',
      data: { agentId, signalKey, correlationId: `${SIGNAL_QUEUE}/sweep` },
      opts: { ...JOB_OPTIONS, jobId: jobIdOf(agentId, signalKey) },
    })),
  );
  return signals.length;
}

export async function startSignalWorker(connection: ConnectionOptions, prefix: string, deps: SignalWorkerDeps, options: { lockDurationMs?: number } = {}) {
  const queue = new Queue(SIGNAL_QUEUE, { connection, prefix });
  await queue.upsertJobScheduler(SWEEP_SCHEDULER, { every: deps.sweepEveryMs }, { name: 'sweep', opts: { removeOnComplete: true, removeOnFail: { count: 100 } } });
  const processor = async (job: Job): Promise<unknown> => {
    switch (job.name) {
      case 'execute-signal':
        return execute(deps, executeSignalJob.parse(job.data));
      case 'sweep':
        return sweep(deps, queue);
      default:
        throw new Error(`unknown ${SIGNAL_QUEUE} job ${job.name}`);
    }
  };
  // A killed worker's job is handed on once its lock lapses (SIGNAL_JOB_LOCK_MS): short, so a
  // fan-out interrupted by a crash goes on within seconds. It may stall as often as it may fail:
  // past BullMQ's default of one stall the job failed for good, and the sweep cannot queue its id again.
  const lockDuration = options.lockDurationMs ?? 10_000;
  const worker = new Worker(SIGNAL_QUEUE, processor, { connection, prefix, concurrency: 4, lockDuration, stalledInterval: lockDuration, maxStalledCount: JOB_OPTIONS.attempts });
  return { queue, worker };
}
