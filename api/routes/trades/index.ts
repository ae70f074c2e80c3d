import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { tradeListJson } from '../../../projections/trades/queries.ts';
import { tradeRecordSchema } from '../../../projections/trades/record.ts';
import { okPaginatedRendered } from '../../envelope.ts';
import { paginatedOf } from '../developers/record.ts';
import { tradeListQuery } from './schemas.ts';

const tags = ['Trade'];

/** The caller's agent trades (one per follower pool and signal). */
export default async function tradeRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/v1/trades',
    {
      onRequest: app.requireUser,
      schema: {
        tags,
        security: [{ bearerAuth: [] }],
        summary: "The caller's agent trades, newest first; filters agentId, status, walletContext",
        querystring: tradeListQuery,
        response: { 200: paginatedOf(tradeRecordSchema) },
      },
    },
    async (request, reply) => {
      const { itemsJson, total } = await tradeListJson(app.deps.pool, request.identity!.userId, request.query);
      return okPaginatedRendered(reply, itemsJson, total, request.query);
    },
  );
}
