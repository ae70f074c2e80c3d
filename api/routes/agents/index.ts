import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { getFollowableAgentRow, listFollowableAgents, publicAgentRecord, toPublicAgentRecord } from '../../../projections/agents/queries.ts';
import { followerPools } from '../../../projections/subscriptions/queries.ts';
import { envelopeOf, ok, paginated } from '../../envelope.ts';
import { agentIdParams, paginatedOf } from '../developers/record.ts';
import { deleteAgentQuery, deletedAgentAnswer, followableQuery, pinsAnswer } from './schemas.ts';

const tags = ['Agent'];

/** The marketplace: agents a user can follow (beta and live), public; and their removal. */
export default async function agentRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/v1/agents',
    {
      schema: {
        tags,
        summary: 'Followable agents (beta and live), newest first',
        querystring: followableQuery,
        response: { 200: paginatedOf(publicAgentRecord) },
      },
    },
    async (request) => {
      const { rows, total } = await listFollowableAgents(app.deps.pool, request.query);
      return paginated(rows.map(toPublicAgentRecord), total, request.query);
    },
  );

  app.get(
    '/api/v1/agents/:id',
    {
      config: { refusals: ['AGENT_NOT_FOUND'] },
      schema: { tags, summary: 'One followable agent', params: agentIdParams, response: { 200: envelopeOf(publicAgentRecord) } },
    },
    async (request) => {
      const row = await getFollowableAgentRow(app.deps.pool, request.params.id);
      if (!row) throw refuse('AGENT_NOT_FOUND', 'agent not found');
      return ok(toPublicAgentRecord(row));
    },
  );

  app.delete(
    '/api/v1/agents/:id',
    {
      config: { access: { scope: 'developer:write' }, dispatches: ['DeleteAgent'] },
      schema: {
        tags,
        summary:
          "Delete an agent (its developer or an administrator): its followers' pools stop taking trades; open trades are closed first with closeActiveTrades=true, else 409",
        params: agentIdParams,
        querystring: deleteAgentQuery,
        response: { 200: envelopeOf(deletedAgentAnswer) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const { userId, role } = request.identity!;
      const poolIds = await followerPools(app.deps.pool, id);
      const caller = { userId, isAdmin: role === 'admin' };
      const result = await request.dispatch('DeleteAgent', { agentId: id, caller, closeActiveTrades: request.query.closeActiveTrades, poolIds });
      return ok({ message: 'Agent deleted', ...result });
    },
  );

  app.post(
    '/api/v1/agents/:id/pin',
    {
      config: { access: { scope: 'profile:write' }, dispatches: ['PinAgent'] },
      schema: {
        tags,
        summary: 'Pin a followable agent for the caller (at most 20: 400 TOO_MANY_PINS beyond); pinning a pinned one changes nothing',
        params: agentIdParams,
        response: { 200: envelopeOf(pinsAnswer) },
      },
    },
    async (request) => {
      const { pinnedAgentIds, changed } = await request.dispatch('PinAgent', { userId: request.identity!.userId, agentId: request.params.id });
      return ok({ pinnedAgentIds, message: changed ? 'Agent pinned' : 'Agent already pinned' });
    },
  );

  app.delete(
    '/api/v1/agents/:id/pin',
    {
      config: { access: { scope: 'profile:write' }, dispatches: ['UnpinAgent'] },
      schema: {
        tags,
        summary: 'Unpin an agent for the caller; an agent not pinned answers the list unchanged',
        params: agentIdParams,
        response: { 200: envelopeOf(pinsAnswer) },
      },
    },
    async (request) => {
      const { pinnedAgentIds, changed } = await request.dispatch('UnpinAgent', { userId: request.identity!.userId, agentId: request.params.id });
      return ok({ pinnedAgentIds, message: changed ? 'Agent unpinned' : 'Agent was not pinned' });
    },
  );
}
