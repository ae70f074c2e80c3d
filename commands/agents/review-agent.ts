import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { agentFolder, agentStream, decide, type AgentCommand, type ReviewDecision } from '../../domain/agent/index.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import { handle, type CommandContext } from '../handle.ts';

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

/** One administrator decision: approve (pending-review → beta), reject (→ rejected), promote (beta → live). */
export async function reviewAgent(
  store: EventStore,
  agentId: string,
  decision: ReviewDecision,
  input: ReviewBody,
  ctx: CommandContext,
) {
  const data = { ...input, reviewId: randomUUID() };
  const command = { type: commandType[decision], data, metadata: { now: ctx.now } } as AgentCommand;
  return handle(store, agentStream(agentId), agentFolder, (state) => decide(command, state), ctx);
}
