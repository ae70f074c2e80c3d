// POST /api/v1/developers/agents/{id}/webhook-deliveries/disable and /enable: the developer stops
// or restarts developer webhooks (docs/decisions.md, "Developer webhooks: outbox, order and retries").
import { agentDecider, type AgentState } from '../../domain/agent/index.ts';
import type { Command } from '../../domain/shared/decider.ts';
import type { Tools } from '../tools.ts';
import type { SetWebhookDeliveryData } from './commands.ts';

export async function setWebhookDelivery({ data }: Command<'SetWebhookDelivery', SetWebhookDeliveryData>, tools: Tools): Promise<{ agent: AgentState }> {
  const result = await tools.execute(agentDecider, data.agentId, {
    type: 'SetWebhookDelivery',
    data: { developerId: data.developerId, enabled: data.enabled, ...(data.reason ? { reason: data.reason } : {}) },
  });
  return { agent: result.state };
}
