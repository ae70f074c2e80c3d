// Developer webhooks (docs/decisions.md, "Developer webhooks: outbox, order and retries" and
// "Developer webhooks: lanes"): a repeatable `sweep` finds agents with a delivery free to go (the
// outbox the webhooks projector fills) and queues one `deliver` job per agent, its id derived from the
// fact (agent, event, attempt, an expired lease) so a duplicate is a no-op; the projections' notices
// (infra/webhook-notices.ts) start an agent's deliveries at once, without a job. A run sends an
// agent's deliveries in its lanes' order, up to IN_FLIGHT_PER_AGENT side by side (a lease each, no two
// of one lane), each signed, sent and its attempt recorded, until none is free or RUN_LENGTH went (then
// a job for the rest); a failure schedules that delivery's next try (exponential backoff with jitter,
// domain/webhook/delivery.ts), and its lanes' later deliveries wait behind it.
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { agentSigningSecret } from '../commands/signals/receive.ts';
import type { Dispatcher } from '../commands/dispatch.ts';
import { deliveryIdOf, IN_FLIGHT_PER_AGENT, isDelivered, nextAttemptAt } from '../domain/webhook/delivery.ts';
import type { CommandRoom } from '../commands/handle.ts';
import type { Logger } from 'pino';
import type { Clock } from '../infra/clock.ts';
import type { Config } from '../infra/config.ts';
import { subscribeWebhookNotices } from '../infra/webhook-notices.ts';
import type { WebhookSender } from '../infra/webhook-sender.ts';
import type { AttemptResult, ClaimedDelivery, DueAgent } from '../projections/webhooks/queries.ts';

export const WEBHOOKS_QUEUE = 'webhooks';
const SWEEP_SCHEDULER = 'webhooks-sweep';
const SWEEP_BATCH = 200;
/** about the most events one run delivers to one agent before a job for the rest is queued, behind the other agents' jobs */
export const RUN_LENGTH = 50;
/** after a run that delivered some and found no more due: how soon the agent's outbox is looked at again */
const FOLLOW_UP_DELAY_MS = 100;

const deliverJob = z.object({ agentId: z.string().min(1) });

/** The outbox: projections/webhooks/queries.ts, batched in the service (workers/webhook-outbox.ts). */
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

/** How long a decrypted signing secret is used before the agent's stream is read again. */
const SECRET_TTL_MS = 30_000;
/** beyond this many agents remembered, all are forgotten (memory stays bounded) */
const MAX_SECRETS = 10_000;
/** per command room (one per process): agent → its signing secret, until when */
const secretsByRoom = new WeakMap<CommandRoom, Map<string, { secret: string; until: number }>>();

function secretsOf(room: CommandRoom): Map<string, { secret: string; until: number }> {
  let secrets = secretsByRoom.get(room);
  if (!secrets) secretsByRoom.set(room, (secrets = new Map()));
  return secrets;
}

/**
 * The agent's signing secret, remembered a short while (a read of its stream and a decryption each time otherwise).
 * Asked only for a delivery whose claim found the agent not deleted (the projected endpoint, read in the claim's
 * transaction), so the cache never outlives a deletion the claim sees; a claim that sees it drops the entry.
 */
async function signingSecret(deps: WebhookWorkerDeps, agentId: string): Promise<string | undefined> {
  const { room } = deps.dispatch;
  const secrets = secretsOf(room);
  const now = performance.now();
  const known = secrets.get(agentId);
  if (known && known.until > now) return known.secret;
  const secret = await agentSigningSecret({ room, config: deps.config }, agentId);
  if (secrets.size >= MAX_SECRETS) secrets.clear();
  if (secret === undefined) secrets.delete(agentId);
  else secrets.set(agentId, { secret, until: now + SECRET_TTL_MS });
  return secret;
}

/** One attempt at a claimed delivery: what the receiver answered, and when it is tried next. */
async function attempt(deps: WebhookWorkerDeps, claimed: ClaimedDelivery): Promise<AttemptResult> {
  const now = deps.clock.now();
  if (claimed.agentDeleted) secretsOf(deps.dispatch.room).delete(claimed.agentId);
  const secret = claimed.agentDeleted ? undefined : await signingSecret(deps, claimed.agentId);
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

/** A run of deliveries to one agent: `wake` starts again the slots that stopped (something new may be free). */
interface AgentRun {
  wake(): void;
  /** no slot is left: a wake does nothing */
  readonly over: boolean;
  /** how many were delivered, once no slot is left */
  readonly delivered: Promise<number>;
}

/**
 * Delivers the agent's deliveries free to go, IN_FLIGHT_PER_AGENT side by side: each slot claims one,
 * sends it, records it and goes on, until none is free, one of its deliveries fails, or RUN_LENGTH
 * were delivered. The claims and records of slots running together go as one statement where the
 * outbox batches them (workers/webhook-outbox.ts).
 */
function startRun(deps: WebhookWorkerDeps, agentId: string): AgentRun {
  let alive = 0;
  let delivered = 0;
  /** the webhook was disabled: a give-up was recorded */
  let disabled = false;
  /** give-ups being recorded: the other slots send nothing meanwhile (the webhook may be about to be disabled) */
  let givingUp = 0;
  const stopped = () => disabled || givingUp > 0;
  let over = false;
  let failure: { err: unknown } | undefined;
  let resolve: (delivered: number) => void = () => {};
  let reject: (err: unknown) => void = () => {};
  const promise = new Promise<number>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const deliverSome = async () => {
    while (!stopped() && delivered < RUN_LENGTH) {
      const claimed = await deps.webhookOutbox.claimHead(agentId, deps.clock.now(), leaseMsOf(deps));
      if (!claimed) return;
      // another slot gave a delivery up and disables the webhook: this one is not sent (its lease runs out, and it waits for enabling)
      if (stopped()) return;
      const result = await attempt(deps, claimed);
      // a redelivery the developer asked for (perhaps of an event days old) failing says nothing of the 3 days the webhook has been failing
      const givenUp = !result.outcome.delivered && result.outcome.nextAttemptAt === null && result.error !== AGENT_DELETED && !claimed.redelivered;
      if (givenUp) givingUp++;
      let recorded: boolean;
      try {
        recorded = await deps.webhookOutbox.recordAttempt(claimed, result);
      } finally {
        if (givenUp) givingUp--;
      }
      // a late report (this attempt's lease ran out and another was recorded first, or another report of it kept) decides nothing: not even disabling
      if (!recorded) return;
      if (!result.outcome.delivered) {
        if (givenUp) {
          // disabled only once the give-up is recorded
          disabled = true;
          await disableFailing(deps, claimed);
        }
        return;
      }
      delivered++;
    }
  };
  const slot = async () => {
    alive++;
    try {
      await deliverSome();
    } catch (err) {
      failure ??= { err };
    } finally {
      if (--alive === 0) {
        over = true;
        if (failure) reject(failure.err);
        else resolve(delivered);
      }
    }
  };
  const wake = () => {
    if (over || stopped() || delivered >= RUN_LENGTH) return;
    while (alive < IN_FLIGHT_PER_AGENT) void slot();
  };
  wake();
  return {
    wake,
    get over() {
      return over;
    },
    delivered: promise,
  };
}

/** Delivers the agent's deliveries free to go (startRun); how many were delivered. */
export const deliverToAgent = (deps: WebhookWorkerDeps, agentId: string): Promise<number> => startRun(deps, agentId).delivered;

/**
 * A delivery was given up: the receiver failed it for 3 days (its lanes' later events waited behind it).
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
      if (delivered > 0) await queue.add('deliver', { agentId }, { ...JOB_OPTIONS, delay: delivered >= RUN_LENGTH ? 0 : FOLLOW_UP_DELAY_MS });
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

/**
 * Runs started by the projections' notices: one run per agent in this process; a notice during it
 * wakes its slots that stopped (a delivery just projected may be free), so nothing new waits for the
 * sweep behind a slow delivery still in flight. A run that stopped at RUN_LENGTH is followed by
 * another. Other processes' runs and the sweep's jobs go beside these: the claim bounds what is in
 * flight per agent.
 */
function noticedRuns(deps: WebhookWorkerDeps, logger: Logger) {
  const runs = new Map<string, AgentRun>();
  const finishing = new Set<Promise<void>>();
  let closed = false;
  const start = (agentId: string) => {
    const run = startRun(deps, agentId);
    runs.set(agentId, run);
    const finished = run.delivered.then(
      (delivered) => {
        if (runs.get(agentId) === run) runs.delete(agentId);
        if (delivered >= RUN_LENGTH && !closed) start(agentId);
      },
      (err) => {
        if (runs.get(agentId) === run) runs.delete(agentId);
        logger.warn({ err, agentId }, 'webhook deliveries failed; the sweep tries again');
      },
    );
    finishing.add(finished);
    void finished.finally(() => finishing.delete(finished));
  };
  return {
    kick(agentIds: string[]) {
      for (const agentId of agentIds) {
        if (closed) return;
        const run = runs.get(agentId);
        if (run && !run.over) run.wake();
        else start(agentId);
      }
    },
    async close() {
      closed = true;
      while (finishing.size > 0) await Promise.all(finishing);
    },
  };
}

/**
 * The queue, its repeatable sweep (every WEBHOOK_SWEEP_INTERVAL_MS; one scheduler whatever the number
 * of processes), the worker, and the runs the projections' notices start (`keyPrefix`: the deployment's).
 */
export async function startWebhookWorker(
  connection: Redis,
  prefix: string,
  deps: WebhookWorkerDeps & { logger: Logger; config: Pick<Config, 'WEBHOOK_DELIVER_ON_PROJECTION'> },
  keyPrefix: string,
) {
  const queue = new Queue(WEBHOOKS_QUEUE, { connection, prefix });
  await queue.upsertJobScheduler(
    SWEEP_SCHEDULER,
    { every: deps.config.WEBHOOK_SWEEP_INTERVAL_MS },
    { name: 'sweep', opts: { removeOnComplete: true, removeOnFail: { count: 100 } } },
  );
  // agents are served in parallel; one agent's lanes each one delivery at a time (the outbox's leases)
  const worker = new Worker(WEBHOOKS_QUEUE, processor(deps, queue), { connection, prefix, concurrency: 8 });
  const runs = noticedRuns(deps, deps.logger);
  const notices = deps.config.WEBHOOK_DELIVER_ON_PROJECTION
    ? subscribeWebhookNotices(connection, keyPrefix, runs.kick, (err) => deps.logger.warn({ err }, 'webhook outbox notices failed'))
    : undefined;
  return {
    queue,
    worker,
    async close() {
      notices?.close();
      await runs.close();
    },
  };
}
