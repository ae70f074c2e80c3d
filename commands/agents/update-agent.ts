// PATCH /api/v1/developers/agents/{id}: the developer edits how the agent's signals are read
// (signalDetectionRule, vetted as at listing) and executed (signalExecutionDefaults).
import { agentDecider, type AgentState } from '../../domain/agent/index.ts';
import type { Command } from '../../domain/shared/decider.ts';
import type { Tools } from '../tools.ts';
import type { UpdateAgentData } from './commands.ts';

export async function updateAgent({ data }: Command<'UpdateAgent', UpdateAgentData>, tools: Tools): Promise<{ agent: AgentState }> {
  const result = await tools.execute(agentDecider, data.agentId, {
    type: 'UpdateAgentSignalSettings',
    data: { developerId: data.developerId, ...data.input },
  });
  return { agent: result.state };
}
