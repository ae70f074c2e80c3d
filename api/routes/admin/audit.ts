import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { streamNames } from '../../../infra/eventstore/streams.ts';
import { auditPool, POOL_STREAM_PREFIX, poolIdOfStream, readModelPoolIds, readModelSnapshot } from '../../../projections/subscriptions/audit.ts';
import { envelopeOf, ok, paginated, paginationQuery } from '../../envelope.ts';
import { paginatedOf } from '../developers/record.ts';

const value = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const poolAudit = z.object({
  poolId: z.string(),
  /** pool events replayed (up to the read model's checkpoint) */
  events: z.number(),
  status: z.enum(['MATCH', 'DIFFERENT', 'MISSING_ROW', 'ORPHAN_ROW']),
  /** DIFFERENT: each read-model column whose value is not the replay's */
  differences: z.array(z.object({ field: z.string(), ledger: value, readModel: value })),
});

/** `{userId}.{agentId}.{walletContext}` */
const poolIdParams = z.object({
  poolId: z
    .string()
    .max(300)
    .regex(/^[^.]+\..+\.(virtual|real)$/, 'poolId is {userId}.{agentId}.{walletContext}'),
});

/**
 * The auditors' views: each pool replayed from its events against its `subscriptions` row, both at
 * the read model's checkpoint, with every column that differs named. Administrators only.
 */
export default async function adminAuditRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const { store, pool } = app.deps;
  const tags = ['Admin'];

  app.get(
    '/api/admin/audit/pools',
    {
      config: { access: { scope: 'admin:read' } },
      schema: {
        tags,
        summary: 'Every pool (its stream or its read-model row), in pool id order, replayed and compared with its row',
        querystring: paginationQuery,
        response: { 200: paginatedOf(poolAudit) },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      const [streams, rowIds] = await Promise.all([streamNames(store, pool, POOL_STREAM_PREFIX), readModelPoolIds(pool)]);
      const ids = [...new Set([...streams.map(poolIdOfStream), ...rowIds])].sort();
      const pageIds = ids.slice((page - 1) * limit, page * limit);
      const { checkpoint, rows } = await readModelSnapshot(pool, pageIds);
      const items = await Promise.all(pageIds.map((id) => auditPool(store, id, checkpoint, rows.get(id))));
      return paginated(items, ids.length, request.query);
    },
  );

  app.get(
    '/api/admin/audit/pools/:poolId',
    {
      config: { access: { scope: 'admin:read' }, refusals: ['POOL_NOT_FOUND'] },
      schema: {
        tags,
        summary: 'One pool replayed from its events and compared with its read-model row',
        params: poolIdParams,
        response: { 200: envelopeOf(poolAudit) },
      },
    },
    async (request) => {
      const { poolId } = request.params;
      const { checkpoint, rows } = await readModelSnapshot(pool, [poolId]);
      const audit = await auditPool(store, poolId, checkpoint, rows.get(poolId));
      if (audit.events === 0 && !rows.has(poolId)) {
        const [first] = await store.readStream(`${POOL_STREAM_PREFIX}${poolId}`, { maxCount: 1 });
        if (!first) throw refuse('POOL_NOT_FOUND', 'no pool has this id');
      }
      return ok(audit);
    },
  );
}
