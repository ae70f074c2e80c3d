// Signal execution: a received signal is a job (id derived from the agent and the signal, so a
// repeated delivery is the same job) that executes it in every follower pool through one
// `ExecuteSignal` command. A worker killed mid-way leaves the job stalled: BullMQ hands it to
// another worker, whose run finds what the first one did (trade ids are stable) and goes on.
// A repeatable sweep re-queues signals received and never executed (a crash between the record and
// the queue). The webhook waits for the job (bounded) through `waitFor`. The price watcher, a
// repeatable job too, ticks every live trade whose token's mark moved (or whose entry expired):
// fills, stops, targets and trailing stops happen there, and a trade that ends pays its pool back.
// It also sells a user's manual lot whose stop-loss or take-profit the mark crossed (ExitLot).
import { Queue, QueueEvents, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { z } from 'zod';
import type { Dispatch } from '../commands/dispatch.ts';
import type { SignalJobs } from '../commands/tools.ts';
import { DomainError } from '../domain/shared/errors.ts';
import type { SignalExecuted } from '../domain/signal/events.ts';
import type { Clock } from '../infra/clock.ts';
import type { LeveledLot } from '../projections/wallets/queries.ts';
import type { Price } from '../domain/shared/price.ts';
import { crossedLevel } from '../domain/wallet/exits.ts';
import { epochMs } from '../infra/clock.ts';
import { inParallel } from '../infra/parallel.ts';

export const SIGNAL_QUEUE = 'signal-execution';
export const SIGNAL_ACTOR = 'system:signal-worker';
export const PRICE_WATCH_ACTOR = 'system:price-watch';
const SWEEP_SCHEDULER = 'signal-execution-sweep';
const WATCH_SCHEDULER = 'price-watch';
/** Trades ticked at once by the watcher. */
const WATCH_CONCURRENCY = 16;

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
  /** pending and open trades, a page at a time in id order */
  liveTrades(afterTradeId: string | null, limit: number): Promise<Array<{ tradeId: string; token: string; status: 'pending' | 'open'; expiresAt: string }>>;
  /** the venue's mark prices by symbol or mint */
  markPrices(): Promise<Map<string, Price>>;
  /** manual lots with a stop-loss or take-profit, a page at a time in (user, lot) order */
  leveledLots(after: { userId: string; lotId: string } | null, limit: number): Promise<LeveledLot[]>;
}

export interface SignalWorkerDeps {
  dispatch: Dispatch;
  clock: Clock;
  signalQueries: SignalQueries;
  /** how often the sweep looks for signals never executed, and how old they must be */
  sweepEveryMs: number;
  /** how often the price watcher ticks live trades */
  watchEveryMs: number;
}

/** The queue side, for the API: hand a signal over, and wait for its execution. */
export interface SignalQueue extends SignalJobs {
  /** the execution's record once the job is done within `timeoutMs`, else null */
  waitFor(agentId: string, signalKey: string, timeoutMs: number): Promise<SignalExecuted | null>;
  close(): Promise<void>;
}

export function createSignalQueue(connection: ConnectionOptions, prefix: string, onerror: (err: Error) => void): SignalQueue {
  const queue = new Queue(SIGNAL_QUEUE, { connection, prefix });
  queue.on('error', onerror);
  let events: QueueEvents | null = null;
  const queueEvents = () => {
    if (events) return events;
    events = new QueueEvents(SIGNAL_QUEUE, { connection, prefix });
    events.on('error', onerror);
    return events;
  };
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

/**
 * A fan-out's decisions may keep losing races (users adding capital, the price watcher) for this
 * long before the run gives up BUSY: a whole fan-out is one command, and a thousand pools take
 * seconds, more than one request's COMMAND_DEADLINE_MS.
 */
const FAN_OUT_DEADLINE_MS = 60_000;

async function execute(deps: SignalWorkerDeps, job: z.infer<typeof executeSignalJob>) {
  const poolIds = await deps.signalQueries.followerPools(job.agentId);
  const { result } = await deps.dispatch(
    {
      type: 'ExecuteSignal',
      data: { agentId: job.agentId, signalKey: job.signalKey, poolIds },
      metadata: { now: deps.clock.now(), actor: SIGNAL_ACTOR, correlationId: job.correlationId },
    },
    { deadline: epochMs() + FAN_OUT_DEADLINE_MS },
  );
  return result;
}

async function sweep(deps: SignalWorkerDeps, queue: Queue): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - deps.sweepEveryMs);
  const signals = await deps.signalQueries.unexecutedSignals(before, 100);
  // A job that failed for good is kept a day under its id, and a job added under that id is
  // ignored meanwhile: it goes, so the signal is queued again (its run finds what earlier ones did).
  for (const { agentId, signalKey } of signals) {
    const failed = await queue.getJob(jobIdOf(agentId, signalKey));
    if (failed && (await failed.isFailed())) await failed.remove();
  }
  await queue.addBulk(
    signals.map(({ agentId, signalKey }) => ({
      name: 'execute-signal',
      data: { agentId, signalKey, correlationId: `${SIGNAL_QUEUE}/sweep` },
      opts: { ...JOB_OPTIONS, jobId: jobIdOf(agentId, signalKey) },
    })),
  );
  return signals.length;
}

/** The price a trade is marked at: its token as written, or in capitals (as the trade's steps read it). */
const priceFor = (prices: Map<string, Price>, token: string) => prices.get(token) ?? prices.get(token.toUpperCase());

/**
 * One watch: every live trade whose token's price differs from the one this process last ticked it
 * at, or whose pending entry has expired. A trade ticked at a price it already saw changes nothing,
 * so a tick repeated by another process is harmless.
 */
export async function watchPrices(deps: SignalWorkerDeps, lastTicked: Map<string, Price>): Promise<number> {
  const prices = await deps.signalQueries.markPrices();
  const now = deps.clock.now();
  const due: Array<{ tradeId: string; price: Price }> = [];
  const live = new Set<string>();
  for (let after: string | null = null; ; ) {
    const page = await deps.signalQueries.liveTrades(after, 1_000);
    for (const trade of page) {
      live.add(trade.tradeId);
      const price = priceFor(prices, trade.token);
      if (price === undefined) continue;
      const expired = trade.status === 'pending' && Date.parse(trade.expiresAt) <= now.getTime();
      if (expired || lastTicked.get(trade.tradeId) !== price) due.push({ tradeId: trade.tradeId, price });
    }
    if (page.length < 1_000) break;
    after = page.at(-1)!.tradeId;
  }
  for (const id of lastTicked.keys()) if (!live.has(id)) lastTicked.delete(id);
  await inParallel(due, WATCH_CONCURRENCY, async ({ tradeId, price }) => {
    await deps.dispatch({
      type: 'MarkTradePrice',
      data: { tradeId, price },
      metadata: { now: deps.clock.now(), actor: PRICE_WATCH_ACTOR, correlationId: `${WATCH_SCHEDULER}/${now.toISOString()}` },
    });
    lastTicked.set(tradeId, price);
  });
  return due.length + (await watchLots(deps, prices, now));
}

/** Manual lots whose stop-loss or take-profit the mark crossed: each is sold whole through the sell path (ExitLot re-checks on the wallet's own state). */
async function watchLots(deps: SignalWorkerDeps, prices: Map<string, Price>, now: Date): Promise<number> {
  const crossed: Array<{ userId: string; lotId: string; price: Price }> = [];
  for (let after: { userId: string; lotId: string } | null = null; ; ) {
    const page = await deps.signalQueries.leveledLots(after, 1_000);
    for (const lot of page) {
      const price = prices.get(lot.mint);
      if (price === undefined) continue;
      if (crossedLevel(lot, price)) crossed.push({ userId: lot.userId, lotId: lot.lotId, price });
    }
    if (page.length < 1_000) break;
    after = page.at(-1)!;
  }
  for (const lot of crossed) {
    try {
      await deps.dispatch({
        type: 'ExitLot',
        data: lot,
        metadata: { now: deps.clock.now(), actor: PRICE_WATCH_ACTOR, correlationId: `${WATCH_SCHEDULER}/${now.toISOString()}/${lot.lotId}` },
      });
    } catch (err) {
      // Refused for now (another trade of the wallet running, a frozen wallet, the swap failed):
      // the next tick tries again while the mark stays beyond the level.
      if (!(err instanceof DomainError)) throw err;
    }
  }
  return crossed.length;
}

export async function startSignalWorker(connection: ConnectionOptions, prefix: string, deps: SignalWorkerDeps, options: { lockDurationMs?: number } = {}) {
  const queue = new Queue(SIGNAL_QUEUE, { connection, prefix });
  const repeatOpts = { removeOnComplete: true, removeOnFail: { count: 100 } };
  await queue.upsertJobScheduler(SWEEP_SCHEDULER, { every: deps.sweepEveryMs }, { name: 'sweep', opts: repeatOpts });
  await queue.upsertJobScheduler(WATCH_SCHEDULER, { every: deps.watchEveryMs }, { name: 'watch-prices', opts: repeatOpts });
  const lastTicked = new Map<string, Price>();
  const processor = async (job: Job): Promise<unknown> => {
    switch (job.name) {
      case 'execute-signal':
        return execute(deps, executeSignalJob.parse(job.data));
      case 'sweep':
        return sweep(deps, queue);
      case 'watch-prices':
        return watchPrices(deps, lastTicked);
      default:
        throw new Error(`unknown ${SIGNAL_QUEUE} job ${job.name}`);
    }
  };
  // A killed worker's job is handed on once its lock lapses (SIGNAL_JOB_LOCK_MS): short, so a
  // fan-out interrupted by a crash goes on within seconds. It may stall as often as it may fail:
  // past BullMQ's default of one stall the job failed for good, and the sweep cannot queue its id again.
  const lockDuration = options.lockDurationMs ?? 10_000;
  const worker = new Worker(SIGNAL_QUEUE, processor, {
    connection,
    prefix,
    concurrency: 4,
    lockDuration,
    stalledInterval: lockDuration,
    maxStalledCount: JOB_OPTIONS.attempts,
  });
  return { queue, worker };
}
