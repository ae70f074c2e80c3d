// PATCH /api/v1/developers/agents/{id}: the developer edits how the agent's signals are read
// (signalDetectionRule, vetted as at listing) and executed (signalExecutionDefaults).
import { z } from 'zod';
import { agentDecider, signalExecutionDefaultsSchema, type AgentState } from '../../domain/agent/index.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { signalDetectionRuleInputSchema } from '../../domain/signal/index.ts';
import type { Tools } from '../dispatch.ts';

export const updateAgentInput = z
  .object({
    signalDetectionRule: signalDetectionRuleInputSchema.optional(),
    signalExecutionDefaults: signalExecutionDefaultsSchema.optional(),
  })
  .strict()
  .refine((v) => v.signalDetectionRule !== undefined || v.signalExecutionDefaults !== undefined, {
    message: 'send signalDetectionRule, signalExecutionDefaults or both',
  });
export type UpdateAgentInput = z.infer<typeof updateAgentInput>;

export interface UpdateAgentData {
  agentId: string;
  developerId: string;
  input: UpdateAgentInput;
}

export async function updateAgent({ data }: Command<'UpdateAgent', UpdateAgentData>, tools: Tools): Promise<{ agent: AgentState }> {
  const result = await tools.execute(agentDecider, data.agentId, {
    type: 'UpdateAgentSignalSettings',
    data: { developerId: data.developerId, ...data.input },
  });
  return { agent: result.state };
}
