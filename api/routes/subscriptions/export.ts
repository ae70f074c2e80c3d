// GET /api/v1/users/me/subscriptions/{agentId}/ledger/export: the caller's pool's ledger as a file,
// streamed from its stream as it is read (projections/exports), CSV or JSONL with a trailer line
// (docs/decisions.md, "Streaming exports"). The same lines as GET …/ledger, without pages.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ExportCell } from '../../../domain/pool/export-rows.ts';
import { poolId } from '../../../domain/pool/state.ts';
import { refuse } from '../../../domain/shared/errors.ts';
import { currentWalletContextOf } from '../../../domain/wallet/context.ts';
import { CONTENT_TYPES, exportStream, type ExportFormat, type ExportSource } from '../../../projections/exports/encode.ts';
import { poolLedgerSource } from '../../../projections/exports/sources.ts';
import { getUser } from '../../../projections/users/queries.ts';
import { ledgerParams } from './ledger.ts';
import { exportFile, ledgerExportQuery } from './schemas.ts';

/** Answers with the export as an attachment: the stream's backpressure paces the store's reads. */
export function sendExport<Row extends Record<string, ExportCell>>(reply: FastifyReply, source: ExportSource<Row>, format: ExportFormat, name: string) {
  return reply
    .header('content-type', CONTENT_TYPES[format])
    .header('content-disposition', `attachment; filename="${name}.${format}"`)
    .header('cache-control', 'no-store')
    .send(exportStream(source, format));
}

export default async function subscriptionLedgerExportRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/v1/users/me/subscriptions/:agentId/ledger/export',
    {
      config: { access: { scope: 'subscriptions:read' }, refusals: ['SUBSCRIPTION_NOT_FOUND'] },
      schema: {
        tags: ['User'],
        summary: "The pool's ledger as a CSV or JSONL file, streamed: every line of GET …/ledger in [from, to), then a trailer (count, SHA-256)",
        params: ledgerParams,
        querystring: ledgerExportQuery,
        response: { 200: exportFile },
      },
    },
    async (request, reply) => {
      const { userId } = request.identity!;
      const { agentId } = request.params;
      const { format, walletContext = currentWalletContextOf(await getUser(app.deps.pool, userId)), from, to } = request.query;
      const source = await poolLedgerSource(app.deps.store, poolId(userId, agentId, walletContext), { from, to });
      if (!source) throw refuse('SUBSCRIPTION_NOT_FOUND', 'you have never followed this agent in this wallet context');
      return sendExport(reply, source, format, `ledger-${agentId.replace(/[^\w.-]/g, '_')}-${walletContext}`);
    },
  );
}
