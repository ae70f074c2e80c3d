// Developer webhooks (docs/decisions.md, "Developer webhooks: outbox, order and retries"), owner
// only: the agent's deliveries with their attempts, one sent again, and a ping sent at once to its
// webhookUrl, signed like every delivery (infra/webhook-sender.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { agentSigningSecret } from '../../../commands/signals/receive.ts';
import { refuse } from '../../../domain/shared/errors.ts';
import { deliveryIdOf, isDelivered, webhookBody, webhookEventTypeSchema } from '../../../domain/webhook/delivery.ts';
import { listDeliveries, redeliver, webhookDeliverySchema, webhookUrlOf } from '../../../projections/webhooks/queries.ts';
import { envelopeOf, ok, paginated, paginationQuery } from '../../envelope.ts';
import { agentIdParams, paginatedOf } from './record.ts';
import { ownAgent } from './signals.ts';

const tags = ['Developer dashboard'];

const deliveryParams = agentIdParams.extend({ eventId: z.string().min(1).max(100) });

const deliveryState = z.object({ agentId: z.string(), webhookEnabled: z.boolean() });

const pingResult = z.object({
  /** the ping's body `id` */
  id: z.string(),
  type: webhookEventTypeSchema,
  url: z.string(),
  delivered: z.boolean(),
  /** the receiver's status; null when it did not answer */
  statusCode: z.number().int().nullable(),
  /** why it did not answer: a refused address, a time-out, a connection error */
  error: z.string().nullable(),
  durationMs: z.number().int(),
});

export default async function developerWebhookRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/v1/developers/agents/:id/webhook-deliveries',
    {
      config: { access: { scope: 'developer:read' }, refusals: ['AGENT_NOT_FOUND', 'NOT_AGENT_OWNER'] },
      schema: {
        tags,
        summary: 'The agent’s webhook deliveries, newest event first: status, attempts (each with its status code or error), next try',
        params: agentIdParams,
        querystring: paginationQuery,
        response: { 200: paginatedOf(webhookDeliverySchema) },
      },
    },
    async (request) => {
      const agent = await ownAgent(app.deps.pool, request.params.id, request.identity!.userId, 'read its webhook deliveries');
      const { items, total } = await listDeliveries(app.deps.pool, agent.id, request.query);
      return paginated(items, total, request.query);
    },
  );

  app.post(
    '/api/v1/developers/agents/:id/webhook-deliveries/test',
    {
      config: {
        access: { scope: 'developer:write' },
        refusals: ['AGENT_NOT_FOUND', 'NOT_AGENT_OWNER', 'NO_WEBHOOK_URL'],
        // a budget of its own, per caller and agent, instead of the tier's: each ping is a request to the developer's URL
        rateLimit: {
          max: app.deps.config.RATE_LIMIT_WEBHOOK_TEST_PINGS_PER_MIN,
          keyGenerator: (request: FastifyRequest) => `webhook-ping:${request.identity?.userId}:${(request.params as { id: string }).id}`,
        },
      },
      schema: {
        tags,
        summary: 'Send a signed `ping` to the agent’s webhookUrl now and answer what the receiver did (not queued, not retried)',
        params: agentIdParams,
        response: { 200: envelopeOf(pingResult) },
      },
    },
    async (request) => {
      const agent = await ownAgent(app.deps.pool, request.params.id, request.identity!.userId, 'test its webhook');
      const { deps } = app;
      const url = await webhookUrlOf(deps.pool, agent.id);
      const secret = await agentSigningSecret({ room: deps.dispatch.room, config: deps.config }, agent.id);
      if (url === undefined || secret === undefined) throw refuse('NO_WEBHOOK_URL', 'the agent has no webhookUrl');
      const now = deps.clock.now();
      const eventId = deps.ids.uuid();
      const body = webhookBody({ eventId, type: 'ping', createdAt: now.toISOString(), data: { agentId: agent.id } });
      const sent = await deps.webhooks.send({ url, secret, body: JSON.stringify(body), id: body.id, type: 'ping', now });
      const delivered = sent.statusCode !== null && isDelivered(sent.statusCode);
      return ok({ id: deliveryIdOf(eventId), type: 'ping' as const, url, delivered, ...sent });
    },
  );

  app.post(
    '/api/v1/developers/agents/:id/webhook-deliveries/:eventId/redeliver',
    {
      config: { access: { scope: 'developer:write' }, refusals: ['AGENT_NOT_FOUND', 'NOT_AGENT_OWNER', 'WEBHOOK_DELIVERY_NOT_FOUND'] },
      schema: {
        tags,
        summary: 'Send a delivery again (its `id` as listed): pending and due now, before the agent’s later pending events; its attempts are kept',
        params: deliveryParams,
        response: { 200: envelopeOf(webhookDeliverySchema) },
      },
    },
    async (request) => {
      const agent = await ownAgent(app.deps.pool, request.params.id, request.identity!.userId, 'redeliver its webhooks');
      const delivery = await redeliver(app.deps.pool, agent.id, request.params.eventId, app.deps.clock.now());
      if (!delivery) throw refuse('WEBHOOK_DELIVERY_NOT_FOUND', 'the agent has no webhook delivery with this id');
      return ok(delivery);
    },
  );

  /** Disables or enables the agent's webhooks (a command on its stream: owner only, 409 without a webhookUrl). */
  const setDelivery = (enabled: boolean) => async (request: FastifyRequest<{ Params: { id: string } }>) => {
    const { agent } = await request.dispatch('SetWebhookDelivery', { agentId: request.params.id, developerId: request.identity!.userId, enabled });
    return ok({ agentId: request.params.id, webhookEnabled: agent.exists && agent.webhookDisabledAt === undefined });
  };

  app.post(
    '/api/v1/developers/agents/:id/webhook-deliveries/disable',
    {
      config: { access: { scope: 'developer:write' }, dispatches: ['SetWebhookDelivery'] },
      schema: {
        tags,
        summary: 'Stop sending the agent’s webhooks: its events keep queueing (their 3-day window running) until enabled',
        params: agentIdParams,
        response: { 200: envelopeOf(deliveryState) },
      },
    },
    setDelivery(false),
  );

  app.post(
    '/api/v1/developers/agents/:id/webhook-deliveries/enable',
    {
      config: { access: { scope: 'developer:write' }, dispatches: ['SetWebhookDelivery'] },
      schema: {
        tags,
        summary: 'Send the agent’s webhooks again: the events queued meanwhile go first, in order',
        params: agentIdParams,
        response: { 200: envelopeOf(deliveryState) },
      },
    },
    setDelivery(true),
  );
}
