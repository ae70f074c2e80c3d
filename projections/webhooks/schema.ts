// The webhooks read model (docs/decisions.md, "Developer webhooks: outbox, order and retries").
// Rebuilt from the log: the agents that have a webhookUrl, which agent a pool follows, which
// signal id a signal stream holds. Kept by a rebuild: the outbox (one row per agent and event,
// with the worker's progress) and its attempts, since they record deliveries that happened; the
// projector only ever inserts into the outbox once per (agent, event). The lanes of the pending
// deliveries (006) are kept with them.
import type { Migration } from '../../infra/db.ts';

export const webhookMigrations: Migration[] = [
  {
    id: 'webhooks/001-outbox',
    sql: `CREATE TABLE webhook_endpoints (
      agent_id text PRIMARY KEY,
      developer_id text NOT NULL,
      url text NOT NULL,
      disabled_at timestamptz,
      deleted_at timestamptz
    );
    CREATE TABLE webhook_pools (pool_id text PRIMARY KEY, agent_id text NOT NULL);
    CREATE TABLE webhook_signals (stream_name text PRIMARY KEY, agent_id text NOT NULL, signal_id text NOT NULL);
    CREATE TABLE webhook_deliveries (
      seq bigserial UNIQUE,
      agent_id text NOT NULL,
      event_id text NOT NULL,
      type text NOT NULL,
      body text NOT NULL,
      occurred_at timestamptz NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      lease_until timestamptz,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      PRIMARY KEY (agent_id, event_id)
    );
    CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (agent_id, seq) WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_by_agent ON webhook_deliveries (agent_id, seq DESC);
    CREATE TABLE webhook_attempts (
      agent_id text NOT NULL,
      event_id text NOT NULL,
      attempt integer NOT NULL,
      at timestamptz NOT NULL,
      status_code integer,
      error text,
      duration_ms integer NOT NULL,
      PRIMARY KEY (agent_id, event_id, attempt)
    );`,
  },
  {
    // why the webhook is disabled, for the developer's dashboard: `failing` (the worker gave up an event after 3 days) or `developer`
    id: 'webhooks/002-disabled-reason',
    sql: 'ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason text',
  },
  {
    // a delivery the developer asked to send again: its failure never disables the webhook (only the organic schedule decides that)
    id: 'webhooks/003-redelivered',
    sql: 'ALTER TABLE webhook_deliveries ADD COLUMN redelivered boolean NOT NULL DEFAULT false',
  },
  {
    // the housekeeping purge finds delivered and given-up rows past their retention by their last attempt (queries.ts `purgeWebhookDeliveries`)
    id: 'webhooks/004-purge',
    sql: "CREATE INDEX webhook_deliveries_done ON webhook_deliveries (last_attempt_at) WHERE status <> 'pending'",
  },
  {
    // Endpoints disabled before 002 kept disabled_reason NULL (shown as the developer's, without the
    // notice): their reason from the agent's last AgentWebhookDisabled event. Where the events live
    // in EventStoreDB there is no events table here: a rebuild of this projector sets it.
    id: 'webhooks/005-disabled-reason-backfill',
    sql: `DO $$
    BEGIN
      IF to_regclass('events') IS NOT NULL THEN
        UPDATE webhook_endpoints e SET disabled_reason = coalesce((
          SELECT d.data->>'reason' FROM events d
           WHERE d.stream_name = 'agent-' || e.agent_id AND d.event_type = 'AgentWebhookDisabled'
           ORDER BY d.revision DESC LIMIT 1), 'developer')
         WHERE e.disabled_at IS NOT NULL AND e.disabled_reason IS NULL;
      END IF;
    END $$;`,
  },
  {
    // Lanes (domain/webhook/delivery.ts `deliveryLanes`): one row per pending delivery and follower pool it
    // names, gone when the delivery is delivered or given up; a delivery is sent once no earlier row of its
    // lanes is left (queries.ts `UNBLOCKED`). Pending rows queued before lanes get theirs from their body.
    id: 'webhooks/006-lanes',
    sql: `CREATE TABLE webhook_lanes (
      agent_id text NOT NULL,
      lane text NOT NULL,
      seq bigint NOT NULL,
      signal_key text,
      PRIMARY KEY (agent_id, lane, seq)
    );
    CREATE INDEX webhook_lanes_seq ON webhook_lanes (seq);
    CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (agent_id) WHERE status = 'pending' AND lease_until IS NOT NULL;
    CREATE INDEX webhook_deliveries_outcomes ON webhook_deliveries (agent_id, seq) WHERE status = 'pending' AND type = 'signal.executed';
    INSERT INTO webhook_lanes (agent_id, lane, seq, signal_key)
    SELECT d.agent_id, l.lane, d.seq, CASE WHEN d.type IN ('trade.opened', 'signal.executed') THEN j.b->'data'->>'signalId' END
    FROM webhook_deliveries d
    CROSS JOIN LATERAL (SELECT d.body::jsonb AS b) j
    CROSS JOIN LATERAL (
      SELECT j.b->'data'->>'poolId' AS lane
      UNION SELECT r->>'poolId' FROM jsonb_array_elements(CASE WHEN jsonb_typeof(j.b->'data'->'results') = 'array' THEN j.b->'data'->'results' ELSE '[]' END) r
      UNION SELECT p->>'poolId' FROM jsonb_array_elements(CASE WHEN jsonb_typeof(j.b->'data'->'parts') = 'array' THEN j.b->'data'->'parts' ELSE '[]' END) p
    ) l
    WHERE d.status = 'pending' AND l.lane IS NOT NULL
    ON CONFLICT DO NOTHING;`,
  },
];
