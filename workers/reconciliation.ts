// Reconciliation: keeps the ledger true against the venues (docs/domain-rules.md, Bridge lifecycle). A
// repeatable sweep reads every pool leg waiting for the venue (the transfers read model) and asks
// the venue about each one in bulk; a leg that needs an action gets one job, its id derived from
// the transfer and the action, so overlapping sweeps and several worker processes never duplicate
// it: `start` submits the leg to the chain or the bridge (and retries a deferred reclaim), `settle`
// dispatches the venue's final answer. The sweep then compares each real pool's venue equity with
// its ledger and records a change (status, or a figure moved by a cent) as an event.
//
// Crash safety: every venue call is keyed by the transfer id (a repeat returns the first record),
// and every command is idempotent by the transfer id, so a job killed between its venue call and
// its append is simply run again (test/workers/reconciliation.crash.test.ts).
import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { z } from 'zod';
import type { Dispatch } from '../commands/dispatch.ts';
import type { CommandMetadata } from '../domain/shared/decider.ts';
import type { Clock } from '../infra/clock.ts';
import type { Config } from '../infra/config.ts';
import { VenueUnavailableError } from '../infra/venues/errors.ts';
import type { BridgeTransfer, ChainTransfer, Venues } from '../infra/venues/port.ts';
import { inParallel } from '../infra/parallel.ts';

export const RECONCILIATION_QUEUE = 'reconciliation';
export const RECONCILIATION_ACTOR = 'system:reconciliation';
const SWEEP_SCHEDULER = 'reconciliation-sweep';
const PAGE = 1_000;
/** venue calls of one sweep in flight at once */
const PARALLEL = 64;
/** the venue's figure and the ledger's may differ by less than a cent (docs/domain-rules.md, Bridge lifecycle) */
const TOLERANCE_MICRO = 10_000;

export const legSchema = z.object({
  transferId: z.string().min(1),
  poolId: z.string().min(1),
  userId: z.string().min(1),
  direction: z.enum(['in', 'out']),
  amountMicro: z.number().int().positive(),
  venue: z.string(),
  correlationId: z.string().nullable(),
});
export type Leg = z.infer<typeof legSchema>;

/** Where the sweep finds its work (implemented by the read models' queries). */
export interface ReconciliationQueries {
  legsAtVenue(afterTransferId: string | null, limit: number): Promise<Leg[]>;
  realPools(
    afterPoolId: string | null,
    limit: number,
  ): Promise<
    Array<{
      poolId: string;
      venue: string;
      currentBalanceMicro: number;
      feesChargedMicro: number;
      reconciliationStatus: string | null;
      venueEquityMicro: number | null;
      venueFreeMarginMicro: number | null;
      venueGapMicro: number | null;
    }>
  >;
}

export interface ReconciliationDeps {
  dispatch: Dispatch;
  clock: Clock;
  venues: Venues;
  config: Pick<Config, 'RECONCILIATION_INTERVAL_MS'>;
  queries: ReconciliationQueries;
}

type VenueRecord = { status: string; amountMicro: number; reason: string | null; bridgeTransactionId?: string | null };

const isPerp = (leg: Leg) => leg.venue === 'PERP_VENUE';

/** What the venue holds for the leg, or null when it never received it. */
async function recordOf(venues: Venues, leg: Leg): Promise<VenueRecord | null> {
  if (isPerp(leg)) return venues.perp.bridge.status(leg.transferId);
  return venues.spot.chain.status(leg.transferId);
}

/** Submits the leg (idempotent by the transfer id): a chain transfer, or a bridge deposit or reclaim. */
async function submit(venues: Venues, leg: Leg): Promise<ChainTransfer | BridgeTransfer> {
  const { transferId, poolId, userId, amountMicro } = leg;
  if (isPerp(leg)) return venues.perp.bridge.start({ transferId, poolId, amountMicro, direction: leg.direction === 'in' ? 'deposit' : 'reclaim' });
  return venues.spot.chain.submit({ transferId, poolId, userId, amountMicro, direction: leg.direction === 'in' ? 'deposit' : 'withdrawal' });
}

const FINAL = new Set(['CONFIRMED', 'FAILED']);

/** The action a leg needs, from the venue's record; null: wait. */
function actionFor(record: VenueRecord | null): 'start' | 'settle' | null {
  if (!record || record.status === 'RECLAIM_DEFERRED') return 'start';
  return FINAL.has(record.status) ? 'settle' : null;
}

function metadataOf(deps: ReconciliationDeps, leg: Leg, jobId: string): CommandMetadata {
  return { now: deps.clock.now(), actor: RECONCILIATION_ACTOR, correlationId: leg.correlationId ?? `${RECONCILIATION_QUEUE}/${jobId}`, causationId: jobId };
}

/**
 * One leg's action. `start`: submit (again) and record the bridge status a perp leg reached.
 * `settle`: read the final record and dispatch it; the transfer then goes on (credit or refund).
 */
export async function runLeg(deps: ReconciliationDeps, leg: Leg, action: 'start' | 'settle', jobId: string): Promise<string> {
  const metadata = metadataOf(deps, leg, jobId);
  let record: VenueRecord | null = await recordOf(deps.venues, leg);
  if (action === 'start' && actionFor(record) === 'start') record = await submit(deps.venues, leg);
  if (!record) return 'unknown';
  if (isPerp(leg) && record.status !== 'CONFIRMED' && record.status !== 'FAILED') {
    await deps.dispatch({
      type: 'RecordPoolFact',
      data: {
        poolId: leg.poolId,
        fact: {
          type: 'RecordBridgeStatus',
          data: {
            transferId: leg.transferId,
            status: record.status as 'BRIDGING' | 'RECLAIM_DEFERRED',
            bridgeTransactionId: record.bridgeTransactionId ?? null,
          },
        },
      },
      metadata,
    });
  }
  if (!FINAL.has(record.status)) return record.status;
  const outcome = record.status === 'CONFIRMED' ? 'confirmed' : 'failed';
  await deps.dispatch({
    type: 'SettleTransfer',
    data: {
      poolId: leg.poolId,
      transferId: leg.transferId,
      outcome,
      amountMicro: outcome === 'confirmed' ? record.amountMicro : 0,
      ...(record.reason ? { reason: record.reason } : {}),
    },
    metadata,
  });
  return record.status;
}

const JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: true, // a later sweep may queue the same action again: it is idempotent
  removeOnFail: { age: 3600 }, // kept an hour for inspection; a later sweep queues the action again
} as const;

export interface SweepReport {
  legs: number;
  queued: number;
  pools: number;
  observed: number;
  unreachable: number;
  /** legs or pools whose check failed otherwise (a venue's unexpected answer): retried next sweep */
  errors: string[];
}

/** One pass: every leg at the venue checked, actions queued; every real pool compared with its venue. */
export async function sweep(deps: ReconciliationDeps, queue: Queue): Promise<SweepReport> {
  const report: SweepReport = { legs: 0, queued: 0, pools: 0, observed: 0, unreachable: 0, errors: [] };
  for (let after: string | null = null; ; ) {
    const legs = await deps.queries.legsAtVenue(after, PAGE);
    if (legs.length === 0) break;
    after = legs[legs.length - 1]!.transferId;
    report.legs += legs.length;
    const jobs: Array<{ name: string; data: { leg: Leg; action: 'start' | 'settle' }; opts: typeof JOB_OPTIONS & { jobId: string } }> = [];
    await inParallel(legs, PARALLEL, async (leg) => {
      let action: 'start' | 'settle' | null;
      try {
        action = actionFor(await recordOf(deps.venues, leg));
      } catch (err) {
        // One leg's bad answer never stops the sweep: it is counted in the sweep's report (the job's result) and retried next time.
        if (err instanceof VenueUnavailableError) report.unreachable++;
        else report.errors.push(`${leg.transferId}: ${err instanceof Error ? err.message : String(err)}`);
        return;
      }
      if (action) jobs.push({ name: 'leg', data: { leg, action }, opts: { ...JOB_OPTIONS, jobId: `${action}-${leg.transferId}` } });
    });
    if (jobs.length) await queue.addBulk(jobs);
    report.queued += jobs.length;
    if (legs.length < PAGE) break;
  }
  for (let after: string | null = null; ; ) {
    const pools = await deps.queries.realPools(after, PAGE);
    if (pools.length === 0) break;
    after = pools[pools.length - 1]!.poolId;
    report.pools += pools.length;
    await inParallel(pools, PARALLEL, async (pool) => {
      try {
        if (await observe(deps, pool)) report.observed++;
      } catch (err) {
        report.errors.push(`${pool.poolId}: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
    if (pools.length < PAGE) break;
  }
  return report;
}

type PoolRow = Awaited<ReturnType<ReconciliationQueries['realPools']>>[number];

/**
 * Venue against ledger for one real pool: the venue's equity plus what is on its way out, against
 * the ledger's balance plus the fees it settled (fees are paid out by the platform's own transfer,
 * which the simulated venue does not make). Dispatched only when it changes what the row shows.
 */
async function observe(deps: ReconciliationDeps, pool: PoolRow): Promise<boolean> {
  const account = pool.venue === 'PERP_VENUE' ? deps.venues.perp.account : deps.venues.spot.account;
  let reading: { status: 'IN_SYNC' | 'GAP' | 'UNKNOWN'; venueEquityMicro: number | null; venueFreeMarginMicro: number | null; gapMicro: number | null };
  try {
    const f = await account.poolFigures(pool.poolId);
    const gap = f.equityMicro + f.outgoingMicro - (pool.currentBalanceMicro + pool.feesChargedMicro);
    reading = {
      status: Math.abs(gap) < TOLERANCE_MICRO ? 'IN_SYNC' : 'GAP',
      venueEquityMicro: f.equityMicro,
      venueFreeMarginMicro: f.freeMicro,
      gapMicro: gap,
    };
  } catch (err) {
    if (!(err instanceof VenueUnavailableError)) throw err;
    reading = { status: 'UNKNOWN', venueEquityMicro: pool.venueEquityMicro, venueFreeMarginMicro: pool.venueFreeMarginMicro, gapMicro: pool.venueGapMicro };
  }
  const moved = (a: number | null, b: number | null) => (a === null) !== (b === null) || Math.abs((a ?? 0) - (b ?? 0)) >= TOLERANCE_MICRO;
  const changed =
    pool.reconciliationStatus !== reading.status ||
    moved(pool.venueEquityMicro, reading.venueEquityMicro) ||
    moved(pool.venueFreeMarginMicro, reading.venueFreeMarginMicro) ||
    moved(pool.venueGapMicro, reading.gapMicro);
  if (!changed) return false;
  const { result } = await deps.dispatch({
    type: 'RecordPoolFact',
    data: { poolId: pool.poolId, fact: { type: 'ObserveVenue', data: { ...reading } } },
    metadata: { now: deps.clock.now(), actor: RECONCILIATION_ACTOR, correlationId: `${RECONCILIATION_QUEUE}/observe-${pool.poolId}` },
  });
  return result.pool.followed;
}

function processor(deps: ReconciliationDeps, queue: Queue) {
  return async (job: Job): Promise<unknown> => {
    switch (job.name) {
      case 'sweep':
        return sweep(deps, queue);
      case 'leg': {
        const { leg, action } = z.object({ leg: legSchema, action: z.enum(['start', 'settle']) }).parse(job.data);
        return runLeg(deps, leg, action, String(job.id));
      }
      default:
        throw new Error(`unknown ${RECONCILIATION_QUEUE} job ${job.name}`);
    }
  };
}

/** The queue, its repeatable sweep (every RECONCILIATION_INTERVAL_MS) and the worker. */
export async function startReconciliation(connection: ConnectionOptions, prefix: string, deps: ReconciliationDeps) {
  const queue = new Queue(RECONCILIATION_QUEUE, { connection, prefix });
  await queue.upsertJobScheduler(
    SWEEP_SCHEDULER,
    { every: deps.config.RECONCILIATION_INTERVAL_MS },
    { name: 'sweep', opts: { removeOnComplete: true, removeOnFail: { count: 100 } } },
  );
  const worker = new Worker(RECONCILIATION_QUEUE, processor(deps, queue), { connection, prefix, concurrency: 16 });
  return { queue, worker };
}
