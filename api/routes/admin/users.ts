import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tierSchema } from '../../../domain/user/events.ts';
import { envelopeOf, ok } from '../../envelope.ts';

const params = z.object({ userId: z.guid('userId must be a user id (a uuid)') });

/** An administrator sets a user's rate-limit tier, ends a user's sessions, or turns a user's MFA off (events with the administrator as actor). */
export default async function adminUserRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.put(
    '/api/admin/users/:userId/tier',
    {
      config: { access: { scope: 'admin:write' } },
      schema: {
        tags: ['Admin'],
        summary: "Set a user's rate-limit tier: free, standard or premium (404 unknown user)",
        params,
        body: z.object({ tier: tierSchema }).strict(),
        response: { 200: envelopeOf(z.object({ userId: z.string(), tier: tierSchema })) },
      },
    },
    async (request) => ok(await request.dispatch('SetTier', { userId: request.params.userId, tier: request.body.tier })),
  );

  app.post(
    '/api/admin/users/:userId/sessions/end',
    {
      config: { access: { scope: 'admin:write' } },
      schema: {
        tags: ['Admin'],
        summary: "End every live session of a user (an account believed taken over): their access and refresh tokens stop working; 404 unknown user",
        params,
        response: { 200: envelopeOf(z.object({ userId: z.string(), sessionsEnded: z.number() })) },
      },
    },
    async (request) => ok(await request.dispatch('EndAllSessions', { userId: request.params.userId })),
  );

  // For a user who lost the authenticator and the recovery codes: the next sign-in needs only the emailed code.
  app.post(
    '/api/admin/users/:userId/mfa/reset',
    {
      config: { access: { scope: 'admin:write' } },
      schema: {
        tags: ['Admin'],
        summary: "Turn a user's MFA off (authenticator and recovery codes lost): 404 unknown user, 409 MFA_NOT_ENABLED when off",
        params,
        response: { 200: envelopeOf(z.object({ userId: z.string(), mfaEnabled: z.literal(false) })) },
      },
    },
    async (request) => ok(await request.dispatch('ResetMfa', { userId: request.params.userId })),
  );
}
