import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { avatarFilenameSchema, languageCodeSchema, usernameSchema } from '../../../domain/user/fields.ts';
import { getUser, listActiveSessions, sessionDocument, userDocument } from '../../../projections/users/queries.ts';
import { envelopeOf, ok } from '../../envelope.ts';

const tags = ['User'];

const profilePatch = z
  .object({
    avatarFilename: avatarFilenameSchema.optional(),
    languageCode: languageCodeSchema.optional(),
    username: usernameSchema.optional(),
    virtualWalletMode: z.boolean().optional(),
  })
  .strict();

export default async function userRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  const me = async (userId: string) => {
    const user = await getUser(app.deps.pool, userId);
    if (!user) throw refuse('USER_NOT_FOUND', 'user not found');
    return user;
  };

  app.get(
    '/api/v1/users/me',
    { config: { access: { scope: 'profile:read' } }, schema: { tags, summary: 'The caller’s user document', response: { 200: envelopeOf(userDocument) } } },
    async (request) => ok(await me(request.identity!.userId)),
  );

  app.patch(
    '/api/v1/users/me',
    {
      config: { access: { scope: 'profile:write' } },
      schema: { tags, summary: 'Update the caller’s profile', body: profilePatch, response: { 200: envelopeOf(userDocument) } },
    },
    async (request) => {
      const userId = request.identity!.userId;
      await request.dispatch('UpdateProfile', { userId, changes: request.body });
      return ok(await me(userId));
    },
  );

  app.get(
    '/api/v1/users/me/sessions',
    {
      config: { access: { scope: 'profile:read' } },
      schema: { tags, summary: 'The caller’s active sessions', response: { 200: envelopeOf(z.array(sessionDocument)) } },
    },
    async (request) => {
      const { userId, sessionId } = request.identity!;
      return ok(await listActiveSessions(app.deps.pool, userId, app.deps.clock.now(), sessionId));
    },
  );
}
