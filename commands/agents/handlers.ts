// The agents area's handlers, one per command of agents/commands.ts.
import type { Handlers } from '../tools.ts';
import type { AgentCommands } from './commands.ts';
import { deleteAgent } from './delete-agent.ts';
import { listAgent } from './list-agent.ts';
import { reviewAgent } from './review-agent.ts';
import { setWebhookDelivery } from './set-webhook-delivery.ts';
import { updateAgent } from './update-agent.ts';

export const agentsHandlers: Handlers<AgentCommands> = {
  ListAgent: listAgent,
  ReviewAgent: reviewAgent,
  UpdateAgent: updateAgent,
  DeleteAgent: deleteAgent,
  SetWebhookDelivery: setWebhookDelivery,
};
