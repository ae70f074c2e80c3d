// The webhook outbox as the worker and the developer routes read and advance it. The worker's
// progress (attempts, status, next try) is written here by the worker, not as events
// (docs/decisions.md, "Developer webhooks: outbox, order and retries").
import { z } from 'zod';
import { deliveryIdOf, deliveryLanes, IN_FLIGHT_PER_AGENT, webhookEventTypeSchema, type WebhookEventType } from '../../domain/webhook/delivery.ts';
import { inTransaction, type Pool } from '../../infra/db.ts';
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
 * How far into an agent's pending deliveries (oldest first) a later lane may overtake one waiting or
 * failing: the claim's and the sweep's cost is bounded by it, not by the backlog behind a receiver
 * that is down (docs/decisions.md, "Developer webhooks: lanes").
 */
const LOOKAHEAD = 2_000;

/**
 * A pending delivery `d` is free to go: no earlier pending delivery shares one of its lanes (a signal's outcome and the trades it opened excepted).
 * A lane row whose delivery is no longer pending (a process of an older version recorded it) never holds a lane.
 */
const UNBLOCKED = `NOT EXISTS (
  SELECT 1 FROM webhook_lanes mine JOIN webhook_lanes earlier
    ON earlier.agent_id = mine.agent_id AND earlier.lane = mine.lane AND earlier.seq < mine.seq
  JOIN webhook_deliveries held ON held.agent_id = earlier.agent_id AND held.seq = earlier.seq AND held.status = 'pending'
  WHERE mine.seq = d.seq AND mine.agent_id = d.agent_id AND (mine.signal_key IS NULL OR earlier.signal_key IS DISTINCT FROM mine.signal_key))`;

/** The agent's pending deliveries a claim looks at, oldest first: its lookahead. */
const WINDOW = (agent: string) =>
  `(SELECT * FROM webhook_deliveries w WHERE w.agent_id = ${agent} AND w.status = 'pending' ORDER BY w.seq LIMIT ${LOOKAHEAD}) d`;

/** `d` is due at `now` (a parameter) and not in flight. */
const DUE = (now: string) => `d.next_attempt_at <= ${now} AND (d.lease_until IS NULL OR d.lease_until <= ${now})`;

/**
 * The agent's deliveries free to go at `now`, in the order they are claimed, at most `limit`: a signal's
 * outcome first (the answer its sender waits for; it waits for none of the trades it opened), then
 * the others oldest first, within the lookahead. Outcomes are few: found by their own index.
 */
const FREE = (agent: string, now: string, limit: string) => `(
  SELECT seq FROM (
    (SELECT d.seq, 0 AS rank FROM webhook_deliveries d WHERE d.agent_id = ${agent} AND d.status = 'pending' AND d.type = 'signal.executed'
       AND ${DUE(now)} AND ${UNBLOCKED} ORDER BY d.seq LIMIT ${limit})
    UNION ALL
    (SELECT d.seq, 1 AS rank FROM ${WINDOW(agent)} WHERE d.type <> 'signal.executed' AND ${DUE(now)} AND ${UNBLOCKED} ORDER BY d.seq LIMIT ${limit})
  ) candidates ORDER BY rank, seq LIMIT ${limit})`;

/**
 * Agents with a delivery free to go at `now` (due, not in flight, first in its lanes), webhooks
 * enabled: at most `limit`, each with the one it would claim first. One probe per endpoint, within its lookahead.
 */
export async function dueAgents(pool: Pool, now: Date, limit: number): Promise<DueAgent[]> {
  const { rows } = await pool.query<{ agent_id: string; event_id: string; attempts: number; lease_until: Date | null }>(
    `SELECT e.agent_id, head.event_id, head.attempts, head.lease_until
     FROM webhook_endpoints e
     CROSS JOIN LATERAL (
       SELECT d.event_id, d.attempts, d.next_attempt_at, d.lease_until FROM webhook_deliveries d WHERE d.seq IN ${FREE('e.agent_id', '$1', '1')}
     ) head
     WHERE e.disabled_at IS NULL
     ORDER BY head.next_attempt_at LIMIT $2`,
    [now, limit],
  );
  return rows.map((r) => ({ agentId: r.agent_id, eventId: r.event_id, attempts: r.attempts, leaseUntil: r.lease_until }));
}

/**
 * The worker's progress (leases, attempts) commits without waiting for the disk: a crash loses at most
 * the last few, and a lost lease or record only sends an event again (at least once; a receiver
 * de-duplicates on its id). The log is written in order, so a claim never outlives the record before
 * it: a delivery lost back to pending takes its lanes back, and what followed it in them waits again.
 */
const PROGRESS_COMMITS = 'SET LOCAL synchronous_commit = off';

/**
 * Claims up to `limit` of the agent's deliveries free to go (oldest first), each with a lease: never
 * two of one lane at once, never more than IN_FLIGHT_PER_AGENT of the agent in flight whoever claims
 * (the endpoint's row is locked while counting). The lease outlives one attempt; a worker that died
 * mid-attempt leaves it to expire, and the event is sent again.
 */
export async function claimHeads(pool: Pool, masterSecret: string, agentId: string, now: Date, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
  const rows = await inTransaction(pool, async (client) => {
    await client.query(PROGRESS_COMMITS);
    const endpoint = await client.query<{ url: string; developer_id: string; deleted_at: Date | null }>(
      'SELECT url, developer_id, deleted_at FROM webhook_endpoints WHERE agent_id = $1 AND disabled_at IS NULL FOR UPDATE',
      [agentId],
    );
    const e = endpoint.rows[0];
    if (!e) return [];
    const claimed = await client.query<{
      event_id: string;
      type: WebhookEventType;
      body: string;
      attempts: number;
      occurred_at: Date;
      redelivered: boolean;
      seq: string;
    }>(
      `WITH free AS (
         SELECT GREATEST(0, $4::int - count(*)::int) AS n FROM webhook_deliveries
         WHERE agent_id = $1 AND status = 'pending' AND lease_until IS NOT NULL AND lease_until > $2
       ), heads AS (
         SELECT seq FROM ${FREE('$1', '$2', 'LEAST($5::int, (SELECT n FROM free))')} heads
       )
       UPDATE webhook_deliveries d SET lease_until = $2::timestamptz + make_interval(secs => $3::double precision / 1000)
       FROM heads WHERE d.seq = heads.seq AND d.status = 'pending' AND ${DUE('$2')}
       RETURNING d.event_id, d.type, d.body, d.attempts, d.occurred_at, d.redelivered, d.seq`,
      [agentId, now, leaseMs, IN_FLIGHT_PER_AGENT, limit],
    );
    // oldest first: the slots start their sends in the log's order
    return claimed.rows.sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq))).map((row) => ({ ...row, ...e }));
  });
  return rows.map((row) => ({
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
  }));
}

/** One delivery of the agent free to go (claimHeads), or undefined. */
export async function claimHead(pool: Pool, masterSecret: string, agentId: string, now: Date, leaseMs: number): Promise<ClaimedDelivery | undefined> {
  return (await claimHeads(pool, masterSecret, agentId, now, leaseMs, 1))[0];
}

export interface AttemptResult {
  at: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** delivered; or the next try; or null: given up */
  outcome: { delivered: true } | { delivered: false; nextAttemptAt: Date | null };
}

/** One claimed delivery's attempt, as the worker reports it. */
export interface AttemptReport {
  claimed: ClaimedDelivery;
  result: AttemptResult;
}

const reportKey = (r: AttemptReport) => `${r.claimed.agentId}/${r.claimed.eventId}`;

/**
 * One report per delivery (agent, event), the delivered one first, else the earliest: two reports of
 * one delivery in one statement would update its row with either (PostgreSQL's UPDATE ... FROM
 * takes one matching row, unspecified which) and both would read as recorded.
 */
function onePerDelivery(reports: AttemptReport[]): Map<string, AttemptReport> {
  const kept = new Map<string, AttemptReport>();
  for (const r of reports) {
    const before = kept.get(reportKey(r));
    if (!before || (r.result.outcome.delivered && !before.result.outcome.delivered)) kept.set(reportKey(r), r);
  }
  return kept;
}

/**
 * Records attempt `attempts + 1` of each claimed delivery and releases its lease; a delivery delivered
 * or given up leaves its lanes (the next of each may go). A second report of the same attempt changes
 * nothing, in a later statement or in the same (onePerDelivery: the delivered report is kept). Whether
 * each was recorded: false when another attempt at it was recorded first, or another report of it kept.
 * One statement for all, so one commit, each delivery's row and its attempt's together.
 */
export async function recordAttempts(pool: Pool, reports: AttemptReport[]): Promise<boolean[]> {
  const kept = onePerDelivery(reports);
  const column = <T>(of: (r: AttemptReport) => T) => [...kept.values()].map(of);
  const statusOf = ({ outcome }: AttemptResult) => (outcome.delivered ? 'delivered' : outcome.nextAttemptAt ? 'pending' : 'failed');
  const { rows } = await inTransaction(pool, async (client) => {
    await client.query(PROGRESS_COMMITS);
    return client.query<{ agent_id: string; event_id: string }>(
      `WITH report AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::int[], $8::text[], $9::int[])
         AS r(agent_id, event_id, attempt, status, next, at, status_code, error, duration_ms)
     ), recorded AS (
       UPDATE webhook_deliveries d SET attempts = r.attempt, status = r.status, next_attempt_at = COALESCE(r.next, d.next_attempt_at), lease_until = NULL,
         last_attempt_at = r.at, last_status_code = r.status_code, last_error = r.error,
         delivered_at = CASE WHEN r.status = 'delivered' THEN r.at END, redelivered = d.redelivered AND r.status = 'pending'
       FROM report r
       WHERE d.agent_id = r.agent_id AND d.event_id = r.event_id AND d.attempts = r.attempt - 1 AND d.status = 'pending'
       RETURNING d.agent_id, d.event_id, d.seq, d.status, r.attempt, r.at, r.status_code, r.error, r.duration_ms
     ), attempts AS (
       INSERT INTO webhook_attempts (agent_id, event_id, attempt, at, status_code, error, duration_ms)
       SELECT agent_id, event_id, attempt, at, status_code, error, duration_ms FROM recorded
     ), done AS (
       DELETE FROM webhook_lanes l USING recorded WHERE recorded.status <> 'pending' AND l.agent_id = recorded.agent_id AND l.seq = recorded.seq
     )
     SELECT agent_id, event_id FROM recorded`,
      [
        column((r) => r.claimed.agentId),
        column((r) => r.claimed.eventId),
        column((r) => r.claimed.attempts + 1),
        column((r) => statusOf(r.result)),
        column((r) => (r.result.outcome.delivered ? null : r.result.outcome.nextAttemptAt)),
        column((r) => r.result.at),
        column((r) => r.result.statusCode),
        column((r) => r.result.error),
        column((r) => r.result.durationMs),
      ],
    );
  });
  const taken = new Set(rows.map((r) => `${r.agent_id}/${r.event_id}`));
  return reports.map((r) => kept.get(reportKey(r)) === r && taken.has(reportKey(r)));
}

/** Records one attempt (recordAttempts); false when another attempt at it was recorded first. */
export async function recordAttempt(pool: Pool, claimed: ClaimedDelivery, result: AttemptResult): Promise<boolean> {
  return (await recordAttempts(pool, [{ claimed, result }]))[0]!;
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
 * kept. Still its lanes go in order: it goes before their later deliveries still pending. A
 * delivery older than the window gets this one attempt (a failure gives it up again). Marked
 * `redelivered` until it is delivered or given up: its failures never disable the webhook, which only
 * the organic retry schedule decides (workers/webhooks.ts). Undefined: the agent has no such delivery.
 */
export async function redeliver(pool: Pool, agentId: string, id: string, now: Date): Promise<WebhookDelivery | undefined> {
  const eventId = await inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ event_id: string; seq: string; type: WebhookEventType; body: string }>(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $3, delivered_at = NULL, redelivered = true
       WHERE agent_id = $1 AND 'evt_' || replace(event_id, '-', '') = $2 RETURNING event_id, seq, type, body`,
      [agentId, id, now],
    );
    const row = rows[0];
    if (!row) return undefined;
    // back in its lanes at its own place: the lanes' later deliveries not yet in flight wait for it
    const { lanes, signalKey } = deliveryLanes(row.type, (JSON.parse(row.body) as { data: Record<string, unknown> }).data);
    await client.query(
      'INSERT INTO webhook_lanes (agent_id, lane, seq, signal_key) SELECT $1, lane, $2, $4 FROM unnest($3::text[]) lane ON CONFLICT DO NOTHING',
      [agentId, row.seq, lanes, signalKey],
    );
    return row.event_id;
  });
  if (eventId === undefined) return undefined;
  const found = await pool.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE d.agent_id = $1 AND d.event_id = $2`, [
    agentId,
    eventId,
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
