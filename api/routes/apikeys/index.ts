import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { listApiKeys, apiKeyItem, unrevokedKeyIds } from '../../../projections/apikeys/queries.ts';
import { envelopeOf, ok, paginated, paginationQuery } from '../../envelope.ts';
import { paginatedOf } from '../developers/record.ts';
import { createdKey, createKeyBody, keyIdParams } from './schemas.ts';

const tags = ['API Keys'];

/** The caller's API keys: created (shown once), listed (never a hash or secret), revoked. */
export default async function apiKeyRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/api/api-keys',
    {
      config: { access: { scope: 'keys:write' }, dispatches: ['CreateApiKey'] },
      schema: {
        tags,
        summary: 'Create an API key (type platform) within your role and your own scopes; the key and its signing secret are shown once',
        body: createKeyBody,
        response: { 201: envelopeOf(createdKey) },
      },
    },
    async (request, reply) => {
      const identity = request.identity!;
      const { name, type, scopes, expiresAt } = request.body;
      // The cap is decided on the user's key registry (domain/apikey/registry.ts); the read model only
      // finds the keys made before it, which their own streams then decide on.
      const { key, apiKey, secretKey } = await request.dispatch('CreateApiKey', {
        ownerId: identity.userId,
        ownerRole: identity.role,
        callerScopes: identity.scopes,
        name,
        ...(type !== undefined ? { type } : {}),
        ...(scopes !== undefined ? { scopes } : {}),
        ...(expiresAt !== undefined ? { expiresAt: new Date(expiresAt).toISOString() } : {}),
        priorKeyIds: await unrevokedKeyIds(app.deps.pool, identity.userId),
      });
      return reply.code(201).send(
        ok({
          id: key.keyId,
          name: key.name,
          type: key.type,
          scopes: key.scopes,
          prefix: key.prefix,
          expiresAt: key.expiresAt,
          createdAt: key.createdAt,
          apiKey,
          secretKey,
        }),
      );
    },
  );

  app.get(
    '/api/api-keys',
    {
      config: { access: { scope: 'keys:read' } },
      schema: {
        tags,
        summary: "The caller's API keys, newest first (never a hash or a secret)",
        querystring: paginationQuery,
        response: { 200: paginatedOf(apiKeyItem) },
      },
    },
    async (request) => {
      const { items, total } = await listApiKeys(app.deps.pool, request.identity!.userId, request.query, app.deps.clock.now());
      return paginated(items, total, request.query);
    },
  );

  app.delete(
    '/api/api-keys/:id',
    {
      config: { access: { scope: 'keys:write' }, dispatches: ['RevokeApiKey'] },
      schema: {
        tags,
        summary: 'Revoke one of your API keys: it is no longer accepted (404 when unknown or revoked already)',
        params: keyIdParams,
        response: { 200: envelopeOf(z.object({ id: z.string(), revokedAt: z.string() })) },
      },
    },
    async (request) => {
      const { revokedAt } = await request.dispatch('RevokeApiKey', { keyId: request.params.id, ownerId: request.identity!.userId });
      return ok({ id: request.params.id, revokedAt });
    },
  );
}
