import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { agentRowOf, developerAgentRecord, getAgentRow, listDeveloperAgents, toDeveloperAgentRecord } from '../../../projections/agents/queries.ts';
import { listSubscribers, subscriberItem, toSubscriberItem } from '../../../projections/agent-figures/queries.ts';
import { listReviews, reviewItem } from '../../../projections/reviews/queries.ts';
import { webhookStateSchema, webhookStatesOf } from '../../../projections/webhooks/queries.ts';
import { envelopeOf, ok, paginated, paginationQuery } from '../../envelope.ts';
import { agentIdParams, paginatedOf, publicBaseUrl } from './record.ts';
import { listAgentInput, updateAgentInput } from '../../../commands/agents/commands.ts';

const tags = ['Developer'];

/**
 * A listing (or an edit of its rules) at its largest: 14 keyword lists of 100 and two token lists
 * of 500 strings of up to 100 characters, 20 channels, the descriptions: over 300 KB, and over
 * 700 KB with keywords in other scripts, in about 2,800 keys and elements. Both routes keep the
 * 1 MiB every route took before, and 4,096 members.
 */
const listingBody = { bodyLimit: 1024 * 1024, jsonMembers: 4_096 } as const;

/**
 * In the caller's agents: the developer webhooks' state, with a notice when the service disabled them
 * (docs/decisions.md, "Developer webhooks: failing receivers, retention, limits and the fan-out figure").
 */
const listedDeveloperAgent = developerAgentRecord.extend({ webhook: webhookStateSchema.optional() });

export default async function developerRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  /** The caller's own agent: 404 when unknown, 403 when another user's (administrators included). */
  const ownAgent = async (agentId: string, callerId: string, what: string) => {
    const agent = await getAgentRow(app.deps.pool, agentId);
    if (!agent) throw refuse('AGENT_NOT_FOUND', 'agent not found');
    if (agent.developer_id !== callerId) throw refuse('NOT_AGENT_OWNER', `only the agent’s developer can read its ${what}`);
    return agent;
  };

  app.post(
    '/api/v1/developers/agents',
    {
      bodyLimit: listingBody.bodyLimit,
      config: { access: { scope: 'developer:write' }, jsonMembers: listingBody.jsonMembers, dispatches: ['ListAgent'], refusals: ['AGENT_NOT_FOUND'] },
      schema: {
        tags,
        summary: 'List an agent for review; answers its signing secret once',
        body: listAgentInput,
        response: { 201: envelopeOf(developerAgentRecord) },
      },
    },
    async (request, reply) => {
      const listed = await request.dispatch('ListAgent', { developerId: request.identity!.userId, input: request.body });
      if (!listed.agent.exists) throw refuse('AGENT_NOT_FOUND', 'agent not found');
      const record = toDeveloperAgentRecord(agentRowOf(listed.agent), publicBaseUrl(app));
      return reply.code(201).send(ok({ ...record, inboundWebhookSigningSecretReveal: listed.signingSecret }));
    },
  );

  app.get(
    '/api/v1/developers/agents',
    {
      config: { access: { scope: 'developer:read' } },
      schema: {
        tags,
        summary:
          'The caller’s agents; `webhook`: whether its developer webhooks are sent, and a notice when the service disabled them after 3 days of failures',
        querystring: paginationQuery,
        response: { 200: paginatedOf(listedDeveloperAgent) },
      },
    },
    async (request) => {
      const { rows, total } = await listDeveloperAgents(app.deps.pool, request.identity!.userId, request.query);
      const base = publicBaseUrl(app);
      const webhooks = await webhookStatesOf(
        app.deps.pool,
        rows.map((row) => row.id),
      );
      return paginated(
        rows.map((row) => ({ ...toDeveloperAgentRecord(row, base), ...(webhooks.has(row.id) ? { webhook: webhooks.get(row.id)! } : {}) })),
        total,
        request.query,
      );
    },
  );

  app.patch(
    '/api/v1/developers/agents/:id',
    {
      bodyLimit: listingBody.bodyLimit,
      config: { access: { scope: 'developer:write' }, jsonMembers: listingBody.jsonMembers, dispatches: ['UpdateAgent'] },
      schema: {
        tags,
        summary: 'Edit how the caller’s agent reads signals (signalDetectionRule) and executes them (signalExecutionDefaults)',
        params: agentIdParams,
        body: updateAgentInput,
        response: { 200: envelopeOf(developerAgentRecord) },
      },
    },
    async (request) => {
      await request.dispatch('UpdateAgent', { agentId: request.params.id, developerId: request.identity!.userId, input: request.body });
      const row = await getAgentRow(app.deps.pool, request.params.id);
      if (!row) throw refuse('AGENT_NOT_FOUND', 'agent not found');
      return ok(toDeveloperAgentRecord(row, publicBaseUrl(app)));
    },
  );

  app.get(
    '/api/v1/developers/agents/:id/reviews',
    {
      config: { access: { scope: 'developer:read' }, refusals: ['AGENT_NOT_FOUND', 'NOT_AGENT_OWNER'] },
      schema: {
        tags: ['Developer dashboard'],
        summary: 'Review decisions on the caller’s agent, newest first',
        params: agentIdParams,
        querystring: paginationQuery,
        response: { 200: paginatedOf(reviewItem) },
      },
    },
    async (request) => {
      const agent = await ownAgent(request.params.id, request.identity!.userId, 'reviews');
      const { items, total } = await listReviews(app.deps.pool, agent.id, request.query);
      return paginated(items, total, request.query);
    },
  );

  app.get(
    '/api/v1/developers/agents/:id/subscribers',
    {
      config: { access: { scope: 'developer:read' }, refusals: ['AGENT_NOT_FOUND', 'NOT_AGENT_OWNER'] },
      schema: {
        tags: ['Developer dashboard'],
        summary:
          'The caller’s agent’s follower pools (every wallet context, stopped ones too), anonymized, with the fees each earned the developer; latest opening first',
        params: agentIdParams,
        querystring: paginationQuery,
        response: { 200: paginatedOf(subscriberItem) },
      },
    },
    async (request) => {
      const agent = await ownAgent(request.params.id, request.identity!.userId, 'subscribers');
      const { rows, total } = await listSubscribers(app.deps.pool, agent.id, request.query);
      const pricing = { id: agent.id, monthlyPriceMicro: agent.record.monthlyPriceMicroUsd };
      return paginated(
        rows.map((row) => toSubscriberItem(row, pricing, app.deps.config.JWT_SECRET)),
        total,
        request.query,
      );
    },
  );
}
