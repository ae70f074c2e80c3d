import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tierSchema } from '../../../domain/user/events.ts';
import { revokeAccountOAuth } from '../../../infra/oauth-store.ts';
import { unrevokedKeyIds } from '../../../projections/apikeys/queries.ts';
import { envelopeOf, ok } from '../../envelope.ts';

const params = z.object({ userId: z.guid('userId must be a user id (a uuid)') });

const revokedAccess = z.object({ userId: z.string(), sessionsEnded: z.number(), apiKeysRevoked: z.number(), oauthGrantsRevoked: z.number() });

/**
 * Everything that lets anyone act as the user, ended by the administrator (the request's caller, the
 * events' actor): sessions (USER_NOT_FOUND first for an unknown user), API keys, OAuth grants with
 * their tokens and the consent page's sign-in. A repeat, or a retry after a failure half-way, ends what is left.
 */
async function revokeAccess(request: FastifyRequest, userId: string): Promise<z.infer<typeof revokedAccess>> {
  const { sessionsEnded } = await request.dispatch('EndAllSessions', { userId });
  const keyIds = await unrevokedKeyIds(request.server.deps.pool, userId);
  for (const keyId of keyIds) await request.dispatch('RevokeApiKey', { keyId, ownerId: userId });
  const oauthGrantsRevoked = await revokeAccountOAuth(request.server.deps.pool, userId);
  return { userId, sessionsEnded, apiKeysRevoked: keyIds.length, oauthGrantsRevoked };
}

/** An administrator sets a user's rate-limit tier, revokes a user's access, or turns a user's MFA off (events with the administrator as actor). */
export default async function adminUserRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.put(
    '/api/admin/users/:userId/tier',
    {
      config: { access: { scope: 'admin:write' }, dispatches: ['SetTier'] },
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
    '/api/admin/users/:userId/access/revoke',
    {
      config: { access: { scope: 'admin:write' }, dispatches: ['EndAllSessions', 'RevokeApiKey'], refusals: ['USER_NOT_FOUND'] },
      schema: {
        tags: ['Admin'],
        summary: 'An account believed taken over: end every session, revoke every API key and every OAuth grant of the user (404 unknown user)',
        params,
        response: { 200: envelopeOf(revokedAccess) },
      },
    },
    async (request) => ok(await revokeAccess(request, request.params.userId)),
  );

  // For a user who lost the authenticator and the recovery codes: the next sign-in needs only the emailed code.
  app.post(
    '/api/admin/users/:userId/mfa/reset',
    {
      config: { access: { scope: 'admin:write' }, dispatches: ['ResetMfa'] },
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
