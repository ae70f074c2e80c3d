import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tierSchema } from '../../../domain/user/events.ts';
import { envelopeOf, ok } from '../../envelope.ts';

/** An administrator sets a user's rate-limit tier (an event with the administrator as actor). */
export default async function adminUserRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.put(
    '/api/admin/users/:userId/tier',
    {
      config: { access: { scope: 'admin:write' } },
      schema: {
        tags: ['Admin'],
        summary: "Set a user's rate-limit tier: free, standard or premium (404 unknown user)",
        params: z.object({ userId: z.guid('userId must be a user id (a uuid)') }),
        body: z.object({ tier: tierSchema }).strict(),
        response: { 200: envelopeOf(z.object({ userId: z.string(), tier: tierSchema })) },
      },
    },
    async (request) => ok(await request.dispatch('SetTier', { userId: request.params.userId, tier: request.body.tier })),
  );
}
