// An administrator's decision on a listed agent: approve (pending-review → beta), reject
// (→ rejected), promote (beta → live).
import { agentDecider, type AgentState } from '../../domain/agent/index.ts';
import type { Command } from '../../domain/shared/decider.ts';
import type { Tools } from '../tools.ts';
import type { ReviewAgentData } from './commands.ts';

const commandType = { approve: 'ApproveAgent', reject: 'RejectAgent', promote: 'PromoteAgent' } as const;

export async function reviewAgent({ data }: Command<'ReviewAgent', ReviewAgentData>, tools: Tools): Promise<{ agent: AgentState }> {
  const { agentId, decision, ...review } = data;
  const result = await tools.execute(agentDecider, agentId, {
    type: commandType[decision],
    data: { ...review, reviewId: tools.deps.ids.uuid() },
  });
  return { agent: result.state };
}
