import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ReviewDecision } from '../../../domain/agent/index.ts';
import { refuse } from '../../../domain/shared/errors.ts';
import { agentRowOf, developerAgentRecord, getAgentRow, toDeveloperAgentRecord } from '../../../projections/agents/queries.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import { agentIdParams, publicBaseUrl } from '../developers/record.ts';
import { reviewBody } from '../../../commands/agents/commands.ts';

const summaries: Record<ReviewDecision, string> = {
  approve: 'Approve a developer agent: pending-review → beta',
  reject: 'Reject a developer agent: pending-review → rejected',
  promote: 'Promote a developer agent: beta → live',
};

/** The administrator's review decisions; each answers the developer agent record. */
export default async function developerAgentReviewRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  for (const decision of ['approve', 'reject', 'promote'] as const) {
    app.post(
      `/api/admin/developer-agents/:id/${decision}`,
      {
        // notes of 5,000 characters, each escaped as \uXXXX at worst (30,000 bytes)
        bodyLimit: 64 * 1024,
        config: { access: { scope: 'admin:write' }, dispatches: ['ReviewAgent'] },
        schema: {
          tags: ['Admin'],
          summary: summaries[decision],
          params: agentIdParams,
          // the spec sends `{}`; a request with no body at all means the same
          body: reviewBody.nullish().transform((body) => body ?? {}),
          response: { 200: envelopeOf(developerAgentRecord) },
        },
      },
      async (request) => {
        const { agent } = await request.dispatch('ReviewAgent', { agentId: request.params.id, decision, ...request.body });
        if (!agent.exists) throw refuse('AGENT_NOT_FOUND', 'agent not found');
        // The record from the state the decision produced; the seat count and the trading figures live in read models of other streams.
        const readModel = await getAgentRow(app.deps.pool, agent.id);
        return ok(toDeveloperAgentRecord(agentRowOf(agent, readModel), publicBaseUrl(app)));
      },
    );
  }
}
