// The webhook outbox as the worker and the developer routes read and advance it. The worker's
// progress (attempts, status, next try) is written here by the worker, not as events
// (docs/decisions.md, "Developer webhooks: outbox, order and retries").
import { z } from 'zod';
import { deliveryIdOf, webhookEventTypeSchema, type WebhookEventType } from '../../domain/webhook/delivery.ts';
import type { Pool } from '../../infra/db.ts';
import { renderWebhookBody } from './render.ts';

/** The head of an agent's queue, claimed for one attempt; its body as sent (render.ts). */
export interface ClaimedDelivery {
  agentId: string;
  eventId: string;
  type: WebhookEventType;
  body: string;
  attempts: number;
  occurredAt: Date;
  url: string;
  /** the agent's developer, for whom the worker disables a webhook failing for 3 days */
  developerId: string;
  /** the agent was deleted: nothing more is sent */
  agentDeleted: boolean;
  /** sent again at the developer's request (`redeliver`): given up, it does not disable the webhook */
  redelivered: boolean;
}

/** An agent's head delivery as the sweep sees it; `leaseUntil`: the expired lease of an attempt that never reported (its worker died). */
export interface DueAgent {
  agentId: string;
  eventId: string;
  attempts: number;
  leaseUntil: Date | null;
}

/**
 * Agents whose oldest undelivered event is due at `now` and not in flight, webhooks enabled: at most `limit`.
 * One probe of the pending index per endpoint for its head (LATERAL … ORDER BY seq LIMIT 1), so the
 * sweep's cost follows the number of agents with a webhookUrl, not the backlog behind their heads
 * (a receiver down for days, a disabled webhook's queue).
 */
export async function dueAgents(pool: Pool, now: Date, limit: number): Promise<DueAgent[]> {
  const { rows } = await pool.query<{ agent_id: string; event_id: string; attempts: number; lease_until: Date | null }>(
    `SELECT e.agent_id, head.event_id, head.attempts, head.lease_until
     FROM webhook_endpoints e
     CROSS JOIN LATERAL (
       SELECT event_id, attempts, next_attempt_at, lease_until FROM webhook_deliveries d
       WHERE d.agent_id = e.agent_id AND d.status = 'pending' ORDER BY d.seq LIMIT 1
     ) head
     WHERE e.disabled_at IS NULL AND head.next_attempt_at <= $1 AND (head.lease_until IS NULL OR head.lease_until <= $1)
     ORDER BY head.next_attempt_at LIMIT $2`,
    [now, limit],
  );
  return rows.map((r) => ({ agentId: r.agent_id, eventId: r.event_id, attempts: r.attempts, leaseUntil: r.lease_until }));
}

/**
 * Claims the agent's oldest pending delivery when it is due and not leased: one in flight per
 * agent, in the log's order (a later event waits behind one being retried). The lease outlives
 * one attempt; a worker that died mid-attempt leaves it to expire, and the event is sent again.
 */
export async function claimHead(pool: Pool, masterSecret: string, agentId: string, now: Date, leaseMs: number): Promise<ClaimedDelivery | undefined> {
  const { rows } = await pool.query<{
    event_id: string;
    type: WebhookEventType;
    body: string;
    attempts: number;
    occurred_at: Date;
    url: string;
    developer_id: string;
    deleted_at: Date | null;
    redelivered: boolean;
  }>(
    `UPDATE webhook_deliveries d SET lease_until = $2::timestamptz + make_interval(secs => $3::double precision / 1000)
     FROM webhook_endpoints e
     WHERE d.agent_id = $1 AND e.agent_id = d.agent_id AND e.disabled_at IS NULL
       AND d.seq = (SELECT seq FROM webhook_deliveries WHERE agent_id = $1 AND status = 'pending' ORDER BY seq LIMIT 1 FOR UPDATE)
       AND d.next_attempt_at <= $2 AND (d.lease_until IS NULL OR d.lease_until <= $2)
     RETURNING d.event_id, d.type, d.body, d.attempts, d.occurred_at, d.redelivered, e.url, e.developer_id, e.deleted_at`,
    [agentId, now, leaseMs],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    agentId,
    eventId: row.event_id,
    type: row.type,
    body: renderWebhookBody(row.body, masterSecret),
    attempts: row.attempts,
    occurredAt: row.occurred_at,
    url: row.url,
    developerId: row.developer_id,
    agentDeleted: row.deleted_at !== null,
    redelivered: row.redelivered,
  };
}

export interface AttemptResult {
  at: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** delivered; or the next try; or null: given up */
  outcome: { delivered: true } | { delivered: false; nextAttemptAt: Date | null };
}

/**
 * Records attempt `attempts + 1` of a claimed delivery and releases its lease; a second report of the
 * same attempt changes nothing. Whether it was recorded: false when another attempt was recorded first.
 */
export async function recordAttempt(pool: Pool, claimed: ClaimedDelivery, result: AttemptResult): Promise<boolean> {
  const attempt = claimed.attempts + 1;
  const { outcome } = result;
  const status = outcome.delivered ? 'delivered' : outcome.nextAttemptAt ? 'pending' : 'failed';
  const next = outcome.delivered ? null : outcome.nextAttemptAt;
  // one statement, so one round trip and atomic: the attempt's row only when the delivery's row took it
  const inserted = await pool.query(
    `WITH recorded AS (
       UPDATE webhook_deliveries SET attempts = $3, status = $4, next_attempt_at = COALESCE($5, next_attempt_at), lease_until = NULL,
         last_attempt_at = $6, last_status_code = $7, last_error = $8, delivered_at = CASE WHEN $4 = 'delivered' THEN $6::timestamptz END,
         redelivered = redelivered AND $4 = 'pending'
       WHERE agent_id = $1 AND event_id = $2 AND attempts = $3 - 1 AND status = 'pending'
       RETURNING agent_id, event_id
     )
     INSERT INTO webhook_attempts (agent_id, event_id, attempt, at, status_code, error, duration_ms)
     SELECT agent_id, event_id, $3, $6, $7, $8, $9 FROM recorded`,
    [claimed.agentId, claimed.eventId, attempt, status, next, result.at, result.statusCode, result.error, result.durationMs],
  );
  return inserted.rowCount === 1;
}

export const webhookAttemptSchema = z.object({
  attempt: z.number().int(),
  at: z.string(),
  statusCode: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int(),
});

export const webhookDeliverySchema = z.object({
  /** the body's `id`: the same on every attempt */
  id: z.string(),
  type: webhookEventTypeSchema,
  status: z.enum(['pending', 'delivered', 'failed']),
  createdAt: z.string(),
  attempts: z.number().int(),
  nextAttemptAt: z.string().nullable(),
  lastAttemptAt: z.string().nullable(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  attemptLog: z.array(webhookAttemptSchema),
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

interface DeliveryRow {
  event_id: string;
  type: WebhookDelivery['type'];
  status: WebhookDelivery['status'];
  occurred_at: Date;
  attempts: number;
  next_attempt_at: Date;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  attempt_log: Array<{ attempt: number; at: string; status_code: number | null; error: string | null; duration_ms: number }>;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function deliveryOf(r: DeliveryRow): WebhookDelivery {
  return {
    id: deliveryIdOf(r.event_id),
    type: r.type,
    status: r.status,
    createdAt: r.occurred_at.toISOString(),
    attempts: r.attempts,
    nextAttemptAt: r.status === 'pending' ? r.next_attempt_at.toISOString() : null,
    lastAttemptAt: iso(r.last_attempt_at),
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    deliveredAt: iso(r.delivered_at),
    attemptLog: r.attempt_log.map((a) => ({
      attempt: a.attempt,
      at: new Date(a.at).toISOString(),
      statusCode: a.status_code,
      error: a.error,
      durationMs: a.duration_ms,
    })),
  };
}

const DELIVERY_COLUMNS = `d.*, COALESCE((SELECT json_agg(a ORDER BY a.attempt) FROM webhook_attempts a
  WHERE a.agent_id = d.agent_id AND a.event_id = d.event_id), '[]') AS attempt_log`;

/** The agent's deliveries, newest event first, each with its attempts in order. */
export async function listDeliveries(
  pool: Pool,
  agentId: string,
  query: { page: number; limit: number },
): Promise<{ items: WebhookDelivery[]; total: number }> {
  const { rows } = await pool.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE d.agent_id = $1 ORDER BY d.seq DESC LIMIT $2 OFFSET $3`,
    [agentId, query.limit, (query.page - 1) * query.limit],
  );
  const total = await pool.query<{ n: string }>('SELECT count(*) AS n FROM webhook_deliveries WHERE agent_id = $1', [agentId]);
  return { items: rows.map(deliveryOf), total: Number(total.rows[0]!.n) };
}

/**
 * Sends a delivery again (`id`: the body's id, as listed): pending and due at `now`, its attempts
 * kept. Still the agent's events go in order: it goes before any later event still pending. A
 * delivery older than the window gets this one attempt (a failure gives it up again). Marked
 * `redelivered` until it is delivered or given up: its failures never disable the webhook, which only
 * the organic retry schedule decides (workers/webhooks.ts). Undefined: the agent has no such delivery.
 */
export async function redeliver(pool: Pool, agentId: string, id: string, now: Date): Promise<WebhookDelivery | undefined> {
  const { rows } = await pool.query<{ event_id: string }>(
    `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $3, delivered_at = NULL, redelivered = true
     WHERE agent_id = $1 AND 'evt_' || replace(event_id, '-', '') = $2 RETURNING event_id`,
    [agentId, id, now],
  );
  if (!rows[0]) return undefined;
  const found = await pool.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE d.agent_id = $1 AND d.event_id = $2`, [
    agentId,
    rows[0].event_id,
  ]);
  return deliveryOf(found.rows[0]!);
}

/** Where the agent's deliveries go, or undefined when it has no webhookUrl (or was deleted). */
export async function webhookUrlOf(pool: Pool, agentId: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ url: string }>('SELECT url FROM webhook_endpoints WHERE agent_id = $1 AND deleted_at IS NULL', [agentId]);
  return rows[0]?.url;
}

export const webhookStateSchema = z.object({
  url: z.string(),
  enabled: z.boolean(),
  disabledAt: z.string().nullable(),
  /** `failing`: disabled by the service after 3 days of failed deliveries; `developer`: by its developer */
  disabledReason: z.enum(['failing', 'developer']).nullable(),
  /** what the dashboard shows the developer when the service disabled the webhook */
  notice: z.string().nullable(),
});
export type WebhookState = z.infer<typeof webhookStateSchema>;

const noticeOf = (url: string, disabledAt: Date) =>
  `Deliveries to ${url} failed for 3 days, so webhooks were disabled on ${disabledAt.toISOString()}; events since then are queued, not lost. ` +
  'Fix the receiver (test it with POST …/webhook-deliveries/test), then enable webhooks (POST …/webhook-deliveries/enable): ' +
  'the queued events go first, in order.';

/** The webhook state of each agent that has a webhookUrl (deleted agents left out), by agent id. */
export async function webhookStatesOf(pool: Pool, agentIds: string[]): Promise<Map<string, WebhookState>> {
  const { rows } = await pool.query<{ agent_id: string; url: string; disabled_at: Date | null; disabled_reason: 'failing' | 'developer' | null }>(
    'SELECT agent_id, url, disabled_at, disabled_reason FROM webhook_endpoints WHERE agent_id = ANY($1::text[]) AND deleted_at IS NULL',
    [agentIds],
  );
  return new Map(
    rows.map((r) => [
      r.agent_id,
      {
        url: r.url,
        enabled: r.disabled_at === null,
        disabledAt: iso(r.disabled_at),
        disabledReason: r.disabled_at === null ? null : (r.disabled_reason ?? 'developer'),
        notice: r.disabled_at !== null && r.disabled_reason === 'failing' ? noticeOf(r.url, r.disabled_at) : null,
      },
    ]),
  );
}

/**
 * Deletes delivered and given-up deliveries whose last attempt was before `before`, with their
 * attempts: at most `limit` a call (the housekeeping purge runs again soon). Pending rows are never
 * deleted; one made pending again meanwhile (a redelivery) is kept.
 */
export async function purgeWebhookDeliveries(pool: Pool, before: Date, limit: number): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM webhook_deliveries WHERE status <> 'pending' AND (agent_id, event_id) IN (
         SELECT agent_id, event_id FROM webhook_deliveries WHERE status <> 'pending' AND last_attempt_at < $1 ORDER BY last_attempt_at LIMIT $2
       ) RETURNING agent_id, event_id
     ), attempts AS (
       DELETE FROM webhook_attempts a USING gone WHERE a.agent_id = gone.agent_id AND a.event_id = gone.event_id RETURNING 1
     )
     SELECT (SELECT count(*) FROM gone)::int + (SELECT count(*) FROM attempts)::int AS n`,
    [before, limit],
  );
  return rows[0]!.n;
}
