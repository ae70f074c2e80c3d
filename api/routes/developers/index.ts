import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { listAgent, listAgentInput } from '../../../commands/agents/list-agent.ts';
import { forbidden, notFound } from '../../../domain/shared/errors.ts';
import {
  agentRowOf,
  developerAgentRecord,
  getAgentRow,
  listDeveloperAgents,
  toDeveloperAgentRecord,
} from '../../../projections/agents/queries.ts';
import { listReviews, reviewItem } from '../../../projections/reviews/queries.ts';
import { commandContext } from '../../context.ts';
import { envelopeOf, ok, paginated, paginationQuery } from '../../envelope.ts';
import { agentIdParams, paginatedOf, publicBaseUrl } from './record.ts';

const tags = ['Developer'];
const security = [{ bearerAuth: [] }];

export default async function developerRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/api/v1/developers/agents',
    {
      onRequest: app.requireUser,
      schema: {
        tags,
        security,
        summary: 'List an agent for review; answers its signing secret once',
        body: listAgentInput,
        response: { 201: envelopeOf(developerAgentRecord) },
      },
    },
    async (request, reply) => {
      const listed = await listAgent(app.deps.store, app.deps.config.JWT_SECRET, request.identity!.userId, request.body, commandContext(request));
      await app.deps.readYourWrites(listed.position);
      if (!listed.state.exists) throw notFound('agent not found');
      const record = toDeveloperAgentRecord(agentRowOf(listed.state), publicBaseUrl(app));
      return reply.code(201).send(ok({ ...record, inboundWebhookSigningSecretReveal: listed.signingSecret }));
    },
  );

  app.get(
    '/api/v1/developers/agents',
    {
      onRequest: app.requireUser,
      schema: { tags, security, summary: 'The caller’s agents', querystring: paginationQuery, response: { 200: paginatedOf(developerAgentRecord) } },
    },
    async (request) => {
      const { rows, total } = await listDeveloperAgents(app.deps.pool, request.identity!.userId, request.query);
      const base = publicBaseUrl(app);
      return paginated(rows.map((row) => toDeveloperAgentRecord(row, base)), total, request.query);
    },
  );

  app.get(
    '/api/v1/developers/agents/:id/reviews',
    {
      onRequest: app.requireUser,
      schema: {
        tags: ['Developer dashboard'],
        security,
        summary: 'Review decisions on the caller’s agent, newest first',
        params: agentIdParams,
        querystring: paginationQuery,
        response: { 200: paginatedOf(reviewItem) },
      },
    },
    async (request) => {
      const agent = await getAgentRow(app.deps.pool, request.params.id);
      if (!agent) throw notFound('agent not found');
      if (agent.developer_id !== request.identity!.userId) throw forbidden('only the agent’s developer can read its reviews');
      const { items, total } = await listReviews(app.deps.pool, agent.id, request.query);
      return paginated(items, total, request.query);
    },
  );
}
