import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { reviewAgent, reviewBody } from '../../../commands/agents/review-agent.ts';
import type { ReviewDecision } from '../../../domain/agent/index.ts';
import { notFound } from '../../../domain/shared/errors.ts';
import { agentRowOf, developerAgentRecord, toDeveloperAgentRecord } from '../../../projections/agents/queries.ts';
import { commandContext } from '../../context.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import { agentIdParams, publicBaseUrl } from '../developers/record.ts';

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
        onRequest: app.requireAdmin,
        schema: {
          tags: ['Admin'],
          security: [{ bearerAuth: [] }],
          summary: summaries[decision],
          params: agentIdParams,
          // the spec sends `{}`; a request with no body at all means the same
          body: reviewBody.nullish().transform((body) => body ?? {}),
          response: { 200: envelopeOf(developerAgentRecord) },
        },
      },
      async (request) => {
        const result = await reviewAgent(app.deps.store, request.params.id, decision, request.body, commandContext(request));
        await app.deps.readYourWrites(result.position);
        if (!result.state.exists) throw notFound('agent not found');
        return ok(toDeveloperAgentRecord(agentRowOf(result.state), publicBaseUrl(app)));
      },
    );
  }
}
