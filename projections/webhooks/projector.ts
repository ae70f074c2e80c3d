// Events → the webhook outbox: for an agent with a webhookUrl, each fact it hears of
// (domain/webhook/delivery.ts) becomes one pending delivery, in the log's order (`seq`). A fact
// older than the delivery window when projected (a first catch-up over old history) is not sent.
// While the developer has the webhooks disabled, events still queue; the worker sends none.
import { agentEventSchema, agentEventTypes } from '../../domain/agent/index.ts';
import { feeEventSchema } from '../../domain/fees/events.ts';
import { poolEventSchema, poolEventTypes, type PoolEvent } from '../../domain/pool/events.ts';
import { signalEventSchema, signalEventTypes, type SignalEvent } from '../../domain/signal/events.ts';
import { DELIVERY_WINDOW_MS, webhookBody, type WebhookEventType } from '../../domain/webhook/delivery.ts';
import { parseEvent } from '../../domain/shared/parse-once.ts';
import type { PoolClient } from '../../infra/db.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import type { Projector } from '../projector.ts';
import { webhookMigrations } from './schema.ts';

interface Outgoing {
  agentId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
}

async function enqueue(client: PoolClient, recorded: RecordedEvent, out: Outgoing): Promise<void> {
  const createdAt = recorded.metadata.occurredAt;
  const body = JSON.stringify(webhookBody({ eventId: recorded.id, type: out.type, createdAt, data: out.data }));
  await client.query(
    `INSERT INTO webhook_deliveries (agent_id, event_id, type, body, occurred_at, next_attempt_at)
     SELECT agent_id, $2, $3, $4, $5, $5 FROM webhook_endpoints
     WHERE agent_id = $1 AND deleted_at IS NULL AND $5::timestamptz > now() - make_interval(secs => $6::double precision / 1000)
     ON CONFLICT (agent_id, event_id) DO NOTHING`,
    [out.agentId, recorded.id, out.type, body, createdAt, DELIVERY_WINDOW_MS],
  );
}

async function agentOfPool(client: PoolClient, poolId: string): Promise<string | undefined> {
  return (await client.query<{ agent_id: string }>('SELECT agent_id FROM webhook_pools WHERE pool_id = $1', [poolId])).rows[0]?.agent_id;
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

async function applyPool(client: PoolClient, recorded: RecordedEvent): Promise<void> {
  const poolId = recorded.streamName.slice('pool-'.length);
  const event = parseEvent(poolEventSchema, recorded.type, recorded.data);
  if (event.type === 'AgentFollowed') {
    await client.query('INSERT INTO webhook_pools (pool_id, agent_id) VALUES ($1, $2) ON CONFLICT (pool_id) DO NOTHING', [poolId, event.data.agentId]);
  }
  const out = poolOutgoing(poolId, event);
  if (!out) return;
  // A follow names its agent: no read of the row it has just written.
  const agentId = event.type === 'AgentFollowed' ? event.data.agentId : await agentOfPool(client, poolId);
  if (agentId) await enqueue(client, recorded, { agentId, ...out });
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

async function applyFees(client: PoolClient, recorded: RecordedEvent): Promise<void> {
  const event = feeEventSchema.parse({ type: recorded.type, data: recorded.data });
  if (event.type !== 'FeesClaimed') return;
  const agentId = recorded.streamName.slice('fees-'.length);
  const { transfer, parts, at } = event.data;
  await enqueue(client, recorded, {
    agentId,
    type: 'fees.claimed',
    data: { claimId: transfer.transferId, amountMicro: transfer.amountMicro, parts, claimedAt: at },
  });
}

export const webhooksProjector: Projector = {
  name: 'webhooks',
  migrations: webhookMigrations,
  tables: ['webhook_endpoints', 'webhook_pools', 'webhook_signals'],
  async apply(client, recorded) {
    const { streamName, type } = recorded;
    if (streamName.startsWith('pool-') && poolEventTypes.has(type)) return applyPool(client, recorded);
    if (streamName.startsWith('signal-') && signalEventTypes.has(type)) return applySignal(client, recorded);
    if (streamName.startsWith('agent-') && agentEventTypes.has(type)) return applyAgent(client, recorded);
    if (streamName.startsWith('fees-') && type === 'FeesClaimed') return applyFees(client, recorded);
  },
};
