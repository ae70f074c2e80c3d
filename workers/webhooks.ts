// Developer webhooks (docs/decisions.md, "Developer webhooks: outbox, order and retries"): a
// repeatable `sweep` finds agents whose oldest undelivered event is due (the outbox the webhooks
// projector fills) and queues one `deliver` job per agent, its id derived from the fact (agent,
// event, attempt, an expired lease) so a duplicate is a no-op. A job claims the agent's head (a
// lease: one in flight per agent, in order), signs and sends it, records the attempt, and goes on
// with the agent's next event while they are delivered (RUN_LENGTH a job, then a job for the rest); a
// failure schedules the head's next try (exponential backoff with jitter, domain/webhook/delivery.ts),
// and the agent's later events wait behind it.
import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { z } from 'zod';
import { agentSigningSecret } from '../commands/signals/receive.ts';
import type { Dispatcher } from '../commands/dispatch.ts';
import { deliveryIdOf, isDelivered, nextAttemptAt } from '../domain/webhook/delivery.ts';
import type { Clock } from '../infra/clock.ts';
import type { Config } from '../infra/config.ts';
import type { WebhookSender } from '../infra/webhook-sender.ts';
import type { AttemptResult, ClaimedDelivery, DueAgent } from '../projections/webhooks/queries.ts';

export const WEBHOOKS_QUEUE = 'webhooks';
const SWEEP_SCHEDULER = 'webhooks-sweep';
const SWEEP_BATCH = 200;
/** the most events one job delivers to one agent before it queues a job for the rest, behind the other agents' jobs */
export const RUN_LENGTH = 50;
/** after a run that delivered some and found no more due: how soon the agent's outbox is looked at again */
const FOLLOW_UP_DELAY_MS = 100;

const deliverJob = z.object({ agentId: z.string().min(1) });

/** The outbox (implemented by projections/webhooks/queries.ts). */
export interface WebhookOutbox {
  dueAgents(now: Date, limit: number): Promise<DueAgent[]>;
  claimHead(agentId: string, now: Date, leaseMs: number): Promise<ClaimedDelivery | undefined>;
  /** false: another attempt at the event was recorded first (this one's lease had run out) */
  recordAttempt(claimed: ClaimedDelivery, attempt: AttemptResult): Promise<boolean>;
}

export interface WebhookWorkerDeps {
  dispatch: Dispatcher;
  clock: Clock;
  config: Pick<Config, 'JWT_SECRET' | 'WEBHOOK_SWEEP_INTERVAL_MS' | 'WEBHOOK_RETRY_BASE_MS' | 'WEBHOOK_RETRY_MAX_MS' | 'WEBHOOK_TIMEOUT_MS'>;
  webhooks: WebhookSender;
  webhookOutbox: WebhookOutbox;
  /** the jitter's source, [0, 1) */
  random?: () => number;
}

export const WEBHOOKS_ACTOR = 'system:webhooks';
const AGENT_DELETED = 'the agent was deleted';

// a failed deliver job goes at once: its id (agent, event, attempts, lease) kept would make every sweep's re-add a no-op
const JOB_OPTIONS = { removeOnComplete: true, removeOnFail: true } as const;

/** A lease longer than any attempt: the time-out, and as long again for recording it. */
const leaseMsOf = (deps: WebhookWorkerDeps) => 2 * deps.config.WEBHOOK_TIMEOUT_MS + 5_000;

/** One attempt at the claimed head: what the receiver answered, and when it is tried next. */
async function attempt(deps: WebhookWorkerDeps, claimed: ClaimedDelivery): Promise<AttemptResult> {
  const now = deps.clock.now();
  const secret = claimed.agentDeleted ? undefined : await agentSigningSecret({ room: deps.dispatch.room, config: deps.config }, claimed.agentId);
  if (secret === undefined) return { at: now, statusCode: null, error: AGENT_DELETED, durationMs: 0, outcome: { delivered: false, nextAttemptAt: null } };
  const sent = await deps.webhooks.send({ url: claimed.url, secret, body: claimed.body, id: deliveryIdOf(claimed.eventId), type: claimed.type, now });
  if (sent.statusCode !== null && isDelivered(sent.statusCode)) return { at: now, ...sent, outcome: { delivered: true } };
  const schedule = { baseMs: deps.config.WEBHOOK_RETRY_BASE_MS, maxMs: deps.config.WEBHOOK_RETRY_MAX_MS };
  const next = nextAttemptAt({
    occurredAt: claimed.occurredAt,
    now: deps.clock.now(),
    attempts: claimed.attempts + 1,
    schedule,
    random: (deps.random ?? Math.random)(),
  });
  return { at: now, ...sent, outcome: { delivered: false, nextAttemptAt: next } };
}

/** Delivers the agent's due events in order, one at a time, until one fails or none is due; how many were delivered. */
export async function deliverToAgent(deps: WebhookWorkerDeps, agentId: string): Promise<number> {
  let delivered = 0;
  for (let i = 0; i < RUN_LENGTH; i++) {
    const claimed = await deps.webhookOutbox.claimHead(agentId, deps.clock.now(), leaseMsOf(deps));
    if (!claimed) break;
    const result = await attempt(deps, claimed);
    // a late report (this attempt's lease ran out and another was recorded first) decides nothing: not even disabling
    if (!(await deps.webhookOutbox.recordAttempt(claimed, result))) break;
    if (!result.outcome.delivered) {
      // a redelivery the developer asked for (perhaps of an event days old) failing says nothing of the 3 days the webhook has been failing
      if (result.outcome.nextAttemptAt === null && result.error !== AGENT_DELETED && !claimed.redelivered) await disableFailing(deps, claimed);
      break;
    }
    delivered++;
  }
  return delivered;
}

/**
 * The head was given up: the receiver failed for 3 days (the agent's later events waited behind it).
 * Sending stops (for the developer, as if they disabled it) and the later events queue until the
 * developer enables it again, rather than each being tried and given up in turn.
 */
async function disableFailing(deps: WebhookWorkerDeps, claimed: ClaimedDelivery): Promise<void> {
  await deps.dispatch({
    type: 'SetWebhookDelivery',
    data: { agentId: claimed.agentId, developerId: claimed.developerId, enabled: false, reason: 'failing' },
    metadata: { now: deps.clock.now(), actor: WEBHOOKS_ACTOR, correlationId: `${WEBHOOKS_QUEUE}/${claimed.eventId}` },
  });
}

/**
 * The fact a job acts on: the agent's head at its attempt count, and the expired lease of an attempt
 * whose worker died (else that dead worker's job, still held by BullMQ until it is found stalled,
 * would make the new one a no-op and the event would wait for the stall check).
 */
const deliverJobId = (d: DueAgent) => `deliver-${encodeURIComponent(d.agentId)}-${d.eventId}-${d.attempts}-${d.leaseUntil?.getTime() ?? 0}`;

function processor(deps: WebhookWorkerDeps, queue: Queue) {
  return async (job: Job): Promise<number> => {
    if (job.name === 'deliver') {
      const { agentId } = deliverJob.parse(job.data);
      const delivered = await deliverToAgent(deps, agentId);
      // The agent is busy: a job for what follows is queued now rather than left to the next sweep (up to
      // WEBHOOK_SWEEP_INTERVAL_MS later, for every run of a burst): at once after a full run (behind the
      // other agents' jobs), else shortly, for the events the projector is still writing (a signal's
      // trades). A follow-up that delivers nothing queues none.
      if (delivered > 0) await queue.add('deliver', { agentId }, { ...JOB_OPTIONS, delay: delivered === RUN_LENGTH ? 0 : FOLLOW_UP_DELAY_MS });
      return delivered;
    }
    if (job.name !== 'sweep') throw new Error(`unknown ${WEBHOOKS_QUEUE} job ${job.name}`);
    const due = await deps.webhookOutbox.dueAgents(deps.clock.now(), SWEEP_BATCH);
    await queue.addBulk(
      due.map((d) => ({
        name: 'deliver',
        data: { agentId: d.agentId },
        opts: { ...JOB_OPTIONS, jobId: deliverJobId(d) },
      })),
    );
    return due.length;
  };
}

/** The queue, its repeatable sweep (every WEBHOOK_SWEEP_INTERVAL_MS; one scheduler whatever the number of processes) and the worker. */
export async function startWebhookWorker(connection: ConnectionOptions, prefix: string, deps: WebhookWorkerDeps) {
  const queue = new Queue(WEBHOOKS_QUEUE, { connection, prefix });
  await queue.upsertJobScheduler(
    SWEEP_SCHEDULER,
    { every: deps.config.WEBHOOK_SWEEP_INTERVAL_MS },
    { name: 'sweep', opts: { removeOnComplete: true, removeOnFail: { count: 100 } } },
  );
  // agents are served in parallel; one agent's events never are (the outbox's lease)
  const worker = new Worker(WEBHOOKS_QUEUE, processor(deps, queue), { connection, prefix, concurrency: 8 });
  return { queue, worker };
}
