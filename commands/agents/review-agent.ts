// An administrator's decision on a listed agent: approve (pending-review → beta), reject
// (→ rejected), promote (beta → live).
import { z } from 'zod';
import { agentDecider, type AgentState, type ReviewDecision } from '../../domain/agent/index.ts';
import type { Command } from '../../domain/shared/decider.ts';
import type { Tools } from '../dispatch.ts';

/** The administrator's body: the spec sends an empty object; notes and a safety score are optional. */
export const reviewBody = z.object({
  notes: z.string().max(5000, 'notes must be at most 5000 characters').optional(),
  safetyScore: z
    .number({ message: 'safetyScore must be a number' })
    .int('safetyScore must be a whole number')
    .min(0, 'safetyScore must be from 0 to 100')
    .max(100, 'safetyScore must be from 0 to 100')
    .optional(),
});
export type ReviewBody = z.infer<typeof reviewBody>;

const commandType = { approve: 'ApproveAgent', reject: 'RejectAgent', promote: 'PromoteAgent' } as const;

export interface ReviewAgentData extends ReviewBody {
  agentId: string;
  decision: ReviewDecision;
}

export async function reviewAgent({ data }: Command<'ReviewAgent', ReviewAgentData>, tools: Tools): Promise<{ agent: AgentState }> {
  const { agentId, decision, ...review } = data;
  const result = await tools.execute(agentDecider, agentId, {
    type: commandType[decision],
    data: { ...review, reviewId: tools.deps.ids.uuid() },
  });
  return { agent: result.state };
}
