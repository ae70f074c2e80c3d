import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { subscribeInput } from '../../../commands/subscriptions/subscribe-input.ts';
import { walletContextSchema } from '../../../domain/wallet/events.ts';
import { getSubscription, listSubscriptions } from '../../../projections/subscriptions/queries.ts';
import { subscriptionActionResultSchema, subscriptionRecordSchema } from '../../../projections/subscriptions/record.ts';
import { envelopeOf, ok } from '../../envelope.ts';

const tags = ['User'];

export default async function subscriptionRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/api/v1/users/me/subscriptions',
    {
      preHandler: app.requireUser,
      schema: {
        tags,
        summary: 'Follow an agent with a capital allocation (following again updates the same subscription)',
        security: [{ bearerAuth: [] }],
        body: subscribeInput,
        response: { 200: envelopeOf(subscriptionActionResultSchema) },
      },
    },
    async (request) => {
      const userId = request.identity!.userId;
      const followed = await request.dispatch('FollowAgent', { userId, input: request.body });
      const subscription = await getSubscription(app.deps.pool, userId, followed.agentId, followed.walletContext);
      const { agentName, agentImageUrl } = followed.terms;
      return ok({
        success: true,
        message: followed.created ? `Now following ${agentName}` : `Subscription to ${agentName} updated`,
        ...(subscription ? { subscription } : {}),
        agentName,
        ...(agentImageUrl ? { agentImageUrl } : {}),
      });
    },
  );

  app.get(
    '/api/v1/users/me/subscriptions',
    {
      preHandler: app.requireUser,
      schema: {
        tags,
        summary: "The caller's subscriptions (one per agent and wallet context)",
        security: [{ bearerAuth: [] }],
        querystring: z.object({ walletContext: walletContextSchema.optional() }),
        response: { 200: envelopeOf(z.array(subscriptionRecordSchema)) },
      },
    },
    async (request) => ok(await listSubscriptions(app.deps.pool, request.identity!.userId, request.query.walletContext)),
  );
}
