// Events → the webhook outbox: for an agent with a webhookUrl, each fact it hears of
// (domain/webhook/delivery.ts) becomes one pending delivery, in the log's order (`seq`). A fact
// older than the delivery window when projected (a first catch-up over old history) is not sent.
// While the developer has the webhooks disabled, events still queue; the worker sends none.
import { agentEventSchema, agentEventTypes } from '../../domain/agent/index.ts';
import { feeEventSchema } from '../../domain/fees/events.ts';
import { agentFollowedSchema, poolEventSchema, poolEventTypes, type PoolEvent } from '../../domain/pool/events.ts';
import { signalEventSchema, signalEventTypes, type SignalEvent } from '../../domain/signal/events.ts';
import { DELIVERY_WINDOW_MS, deliveryLanes, webhookBody, type WebhookEventType } from '../../domain/webhook/delivery.ts';
import type { PoolClient } from '../../infra/db.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import type { Projector } from '../projector.ts';
import { webhookMigrations } from './schema.ts';

interface Outgoing {
  agentId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
}

/** A delivery to queue: its agent, its event (id, time), its body and its lanes (domain/webhook/delivery.ts `deliveryLanes`). */
interface Delivery {
  agentId: string;
  eventId: string;
  type: WebhookEventType;
  body: string;
  createdAt: string;
  lanes: string[];
  signalKey: string | null;
}

function deliveryOf(recorded: RecordedEvent, out: Outgoing): Delivery {
  const createdAt = recorded.metadata.occurredAt;
  const body = JSON.stringify(webhookBody({ eventId: recorded.id, type: out.type, createdAt, data: out.data }));
  const { lanes, signalKey } = deliveryLanes(out.type, out.data);
  return { agentId: out.agentId, eventId: recorded.id, type: out.type, body, createdAt, lanes, signalKey };
}

/**
 * The deliveries and their lanes in one statement, once per (agent, event), numbered (`seq`) in the given order: only for an agent
 * whose endpoint is not deleted and a fact younger than the delivery window. Lanes travel as one newline-joined text per delivery.
 */
async function enqueueAll(client: PoolClient, deliveries: Delivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  const column = <K extends keyof Delivery>(key: K) => deliveries.map((d) => d[key]);
  await client.query(
    `WITH batch AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[])
         WITH ORDINALITY AS b(agent_id, event_id, type, body, occurred_at, lanes, signal_key, ord)
     ), queued AS (
       INSERT INTO webhook_deliveries (agent_id, event_id, type, body, occurred_at, next_attempt_at)
       SELECT b.agent_id, b.event_id, b.type, b.body, b.occurred_at, b.occurred_at FROM batch b
       JOIN webhook_endpoints e ON e.agent_id = b.agent_id AND e.deleted_at IS NULL
       WHERE b.occurred_at > now() - make_interval(secs => $8::double precision / 1000)
       ORDER BY b.ord
       ON CONFLICT (agent_id, event_id) DO NOTHING
       RETURNING agent_id, event_id, seq
     )
     INSERT INTO webhook_lanes (agent_id, lane, seq, signal_key)
     SELECT queued.agent_id, lane, queued.seq, b.signal_key FROM queued JOIN batch b USING (agent_id, event_id), unnest(string_to_array(b.lanes, E'\\n')) lane`,
    [
      column('agentId'),
      column('eventId'),
      column('type'),
      column('body'),
      column('createdAt'),
      deliveries.map((d) => d.lanes.join('\n')),
      column('signalKey'),
      DELIVERY_WINDOW_MS,
    ],
  );
}

/** One delivery (enqueueAll), for the facts applied one by one. */
async function enqueue(client: PoolClient, recorded: RecordedEvent, out: Outgoing): Promise<void> {
  await enqueueAll(client, [deliveryOf(recorded, out)]);
}

/** What a pool's fact tells the agent's developer; its pool id is rendered as the follower's anonymized id when sent (render.ts). */
function poolOutgoing(poolId: string, event: PoolEvent): Omit<Outgoing, 'agentId'> | undefined {
  switch (event.type) {
    case 'AgentFollowed':
      return { type: 'follower.joined', data: { poolId, walletMode: event.data.walletMode, followedAt: event.data.subscribedAt } };
    case 'PoolClosed':
      return { type: 'follower.left', data: { poolId, leftAt: event.data.at } };
    case 'TradeOpened': {
      const { tradeId, marginMicro, token, side, signalId, at } = event.data;
      return { type: 'trade.opened', data: { poolId, tradeId, marginMicro, token, side, signalId, openedAt: at } };
    }
    case 'TradeClosed':
      return { type: 'trade.closed', data: { poolId, tradeId: event.data.tradeId, realizedPnlMicro: event.data.realizedPnlMicro, closedAt: event.data.at } };
    case 'FeesSettled': {
      // not its settlementId: it holds the pool id (the body's id identifies the settlement)
      const { feeMicro, creatorMicro, platformMicro, successFeePercent, at } = event.data;
      return { type: 'fees.settled', data: { poolId, feeMicro, creatorMicro, platformMicro, successFeePercent, settledAt: at } };
    }
    default:
      return undefined;
  }
}

async function applySignal(client: PoolClient, recorded: RecordedEvent): Promise<void> {
  const event: SignalEvent = signalEventSchema.parse({ type: recorded.type, data: recorded.data });
  if (event.type === 'SignalReceived') {
    await client.query('INSERT INTO webhook_signals (stream_name, agent_id, signal_id) VALUES ($1, $2, $3) ON CONFLICT (stream_name) DO NOTHING', [
      recorded.streamName,
      event.data.agentId,
      event.data.signalId,
    ]);
    return;
  }
  const { rows } = await client.query<{ agent_id: string; signal_id: string }>('SELECT agent_id, signal_id FROM webhook_signals WHERE stream_name = $1', [
    recorded.streamName,
  ]);
  if (!rows[0]) return;
  const { outcome, skipReason, results, executedAt } = event.data;
  await enqueue(client, recorded, {
    agentId: rows[0].agent_id,
    type: 'signal.executed',
    data: { signalId: rows[0].signal_id, outcome, skipReason, results, executedAt },
  });
}

async function applyAgent(client: PoolClient, recorded: RecordedEvent): Promise<void> {
  const event = agentEventSchema.parse({ type: recorded.type, data: recorded.data });
  if (event.type === 'AgentListed' && event.data.webhookUrl) {
    await client.query('INSERT INTO webhook_endpoints (agent_id, developer_id, url) VALUES ($1, $2, $3) ON CONFLICT (agent_id) DO NOTHING', [
      event.data.agentId,
      event.data.developerId,
      event.data.webhookUrl,
    ]);
  } else if (event.type === 'AgentWebhookDisabled' || event.type === 'AgentWebhookEnabled') {
    const disabled = event.type === 'AgentWebhookDisabled' ? event.data : undefined;
    await client.query('UPDATE webhook_endpoints SET disabled_at = $2, disabled_reason = $3 WHERE agent_id = $1', [
      recorded.streamName.slice('agent-'.length),
      disabled?.disabledAt ?? null,
      disabled ? (disabled.reason ?? 'developer') : null,
    ]);
  } else if (event.type === 'AgentDeleted') {
    await client.query('UPDATE webhook_endpoints SET deleted_at = $2 WHERE agent_id = $1', [recorded.streamName.slice('agent-'.length), event.data.deletedAt]);
  }
}

function feesOutgoing(agentId: string, claim: { transfer: { transferId: string; amountMicro: number }; parts: unknown; at: string }): Outgoing {
  const { transfer, parts, at } = claim;
  return { agentId, type: 'fees.claimed', data: { claimId: transfer.transferId, amountMicro: transfer.amountMicro, parts, claimedAt: at } };
}

/** The pool, signal and fee account facts that queue a delivery (pool events by type; a signal's outcome; a fee claim). */
const queuing = new Set(['AgentFollowed', 'PoolClosed', 'TradeOpened', 'TradeClosed', 'FeesSettled', 'SignalExecuted', 'FeesClaimed']);

/**
 * The agents whose outbox these events may have grown, from their streams' names (`pool-{userId}.{agentId}.{context}`,
 * `signal-{agentId}.{key}`, `fees-{agentId}`): named in the projections' notices (infra/webhook-notices.ts).
 */
export function webhookAgentsOf(events: readonly RecordedEvent[]): string[] {
  const agents = new Set<string>();
  for (const { streamName, type } of events) {
    if (!queuing.has(type)) continue;
    if (streamName.startsWith('pool-')) {
      const poolId = streamName.slice('pool-'.length);
      agents.add(poolId.slice(poolId.indexOf('.') + 1, poolId.lastIndexOf('.')));
    } else if (streamName.startsWith('signal-')) agents.add(streamName.slice('signal-'.length).split('.')[0]!);
    else if (streamName.startsWith('fees-')) agents.add(streamName.slice('fees-'.length));
  }
  return [...agents];
}

/** The pool facts that register a pool or queue a delivery (poolOutgoing); a pool's other facts are skipped unparsed. */
const poolQueuing = new Set(['AgentFollowed', 'PoolClosed', 'TradeOpened', 'TradeClosed', 'FeesSettled']);

/**
 * Pool and fee facts in a handful of statements: the pools' agents and which of them has an endpoint, read once (the pools the run
 * follows are added in order, the first registration wins as its ON CONFLICT does), a fact of a pool whose agent has no endpoint
 * skipped before it is parsed, the pools registered and the deliveries queued in one statement each, in the events' order.
 */
async function applyRun(client: PoolClient, run: RecordedEvent[]): Promise<void> {
  const poolIdOf = (recorded: RecordedEvent) => recorded.streamName.slice('pool-'.length);
  const pools = run.filter((e) => e.streamName.startsWith('pool-') && poolQueuing.has(e.type));
  const followed = pools.filter((e) => e.type === 'AgentFollowed').map((e) => ({ recorded: e, data: agentFollowedSchema.parse(e.data) }));
  const agentOf = new Map<string, string>();
  const hooked = new Set<string>();
  if (pools.length > 0) {
    const { rows } = await client.query<{ pool_id: string; agent_id: string }>('SELECT pool_id, agent_id FROM webhook_pools WHERE pool_id = ANY($1)', [
      [...new Set(pools.map(poolIdOf))],
    ]);
    for (const row of rows) agentOf.set(row.pool_id, row.agent_id);
    const agents = [...new Set([...agentOf.values(), ...followed.map((f) => f.data.agentId)])];
    const endpoints = await client.query<{ agent_id: string }>('SELECT agent_id FROM webhook_endpoints WHERE agent_id = ANY($1) AND deleted_at IS NULL', [
      agents,
    ]);
    for (const row of endpoints.rows) hooked.add(row.agent_id);
  }
  const registered: Array<[string, string]> = [];
  for (const { recorded, data } of followed) {
    const poolId = poolIdOf(recorded);
    if (agentOf.has(poolId)) continue;
    agentOf.set(poolId, data.agentId);
    registered.push([poolId, data.agentId]);
  }
  if (registered.length > 0) {
    await client.query('INSERT INTO webhook_pools (pool_id, agent_id) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (pool_id) DO NOTHING', [
      registered.map((r) => r[0]),
      registered.map((r) => r[1]),
    ]);
  }
  const deliveries: Delivery[] = [];
  for (const recorded of run) {
    if (recorded.streamName.startsWith('fees-')) {
      const event = feeEventSchema.parse({ type: recorded.type, data: recorded.data });
      if (event.type === 'FeesClaimed') deliveries.push(deliveryOf(recorded, feesOutgoing(recorded.streamName.slice('fees-'.length), event.data)));
      continue;
    }
    if (!recorded.streamName.startsWith('pool-') || !poolQueuing.has(recorded.type)) continue;
    const poolId = poolIdOf(recorded);
    const agentId = agentOf.get(poolId);
    if (!agentId || !hooked.has(agentId)) continue;
    const out = poolOutgoing(poolId, poolEventSchema.parse({ type: recorded.type, data: recorded.data }));
    if (out) deliveries.push(deliveryOf(recorded, { agentId, ...out }));
  }
  await enqueueAll(client, deliveries);
}

/** Signal and agent facts read or change what a later fact queues: each closes the run before it and is applied alone. */
function alone(recorded: RecordedEvent): boolean {
  const { streamName, type } = recorded;
  return (streamName.startsWith('signal-') && signalEventTypes.has(type)) || (streamName.startsWith('agent-') && agentEventTypes.has(type));
}

/** Equal to applying the events one by one (test/projections/batch-equivalence.test.ts). */
async function applyBatch(client: PoolClient, events: RecordedEvent[]): Promise<void> {
  let run: RecordedEvent[] = [];
  for (const recorded of events) {
    if (!alone(recorded)) {
      const { streamName, type } = recorded;
      if ((streamName.startsWith('pool-') && poolEventTypes.has(type)) || (streamName.startsWith('fees-') && type === 'FeesClaimed')) run.push(recorded);
      continue;
    }
    await applyRun(client, run);
    run = [];
    if (recorded.streamName.startsWith('signal-')) await applySignal(client, recorded);
    else await applyAgent(client, recorded);
  }
  await applyRun(client, run);
}

export const webhooksProjector: Projector = {
  name: 'webhooks',
  migrations: webhookMigrations,
  tables: ['webhook_endpoints', 'webhook_pools', 'webhook_signals'],
  applyBatch,
  apply: (client, recorded) => applyBatch(client, [recorded]),
};
