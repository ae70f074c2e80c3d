// GET /api/v1/users/me/subscriptions/{agentId}/fee-receipts: the caller's pool's success-fee
// settlements as receipts (domain/pool/receipts.ts), newest first. Replayed from the pool's stream,
// as the ledger is (ledger.ts), with its access, 404s, pages and `at`.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { feeReceipts } from '../../../domain/pool/receipts.ts';
import type { AppDeps } from '../../deps.ts';
import { ok, paginated } from '../../envelope.ts';
import { paginatedOf } from '../developers/record.ts';
import { callersPoolHistory, ledgerParams, ledgerQuery } from './ledger.ts';
import { feeReceiptJson, feeReceiptSchema } from './schemas.ts';

export const feeReceiptsPage = paginatedOf(feeReceiptSchema);

export async function poolFeeReceipts(deps: Pick<AppDeps, 'pool' | 'store'>, userId: string, agentId: string, query: z.infer<typeof ledgerQuery>) {
  const { walletContext, at, ...page } = query;
  const receipts = [...feeReceipts(await callersPoolHistory(deps, userId, agentId, { walletContext, at })).values()].reverse();
  const items = receipts.slice((page.page - 1) * page.limit, page.page * page.limit).map(feeReceiptJson);
  return paginated(items, receipts.length, page).data;
}

export default async function subscriptionFeeReceiptRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/v1/users/me/subscriptions/:agentId/fee-receipts',
    {
      config: { access: { scope: 'subscriptions:read' }, refusals: ['SUBSCRIPTION_NOT_FOUND'] },
      schema: {
        tags: ['User'],
        summary: "The pool's success-fee settlements as receipts (profit, high-water mark, rate, split, trigger), newest first; `at` replays to a time",
        params: ledgerParams,
        querystring: ledgerQuery,
        response: { 200: feeReceiptsPage },
      },
    },
    async (request) => ok(await poolFeeReceipts(app.deps, request.identity!.userId, request.params.agentId, request.query)),
  );
}
