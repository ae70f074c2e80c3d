import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { tradeListJson, tradeRecordJson } from '../../../projections/trades/queries.ts';
import { tradeRecordSchema } from '../../../projections/trades/record.ts';
import { envelopeOf, okPaginatedRendered, okRendered } from '../../envelope.ts';
import { paginatedOf } from '../developers/record.ts';
import { tradeIdParams, tradeListQuery } from './schemas.ts';

const tags = ['Trade'];

/** The caller's agent trades (one per follower pool and signal). */
export default async function tradeRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/v1/trades',
    {
      config: { access: { scope: 'trades:read' } },
      schema: {
        tags,
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

  app.post(
    '/api/v1/trades/:id/close',
    {
      config: { access: { scope: 'trades:write' }, dispatches: ['CloseUserTrade'], refusals: ['TRADE_NOT_FOUND'] },
      schema: {
        tags,
        summary: "Close one of the caller's agent trades at the venue's price (a pending entry is cancelled); the margin and PnL go back to the pool",
        params: tradeIdParams,
        response: { 200: envelopeOf(tradeRecordSchema) },
      },
    },
    async (request, reply) => {
      const userId = request.identity!.userId;
      await request.dispatch('CloseUserTrade', { tradeId: request.params.id, userId });
      const record = await tradeRecordJson(app.deps.pool, userId, request.params.id);
      if (record === null) throw refuse('TRADE_NOT_FOUND', 'you have no trade with this id');
      return okRendered(reply, record);
    },
  );
}
