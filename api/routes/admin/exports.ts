// The auditors' exports, streamed from the global log as it is read (projections/exports): every
// pool's ledger lines, and the transfer journal (every transfer fact). CSV or JSONL with a trailer
// line (docs/decisions.md, "Streaming exports"). Administrators only.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { allLedgerSource, transfersSource } from '../../../projections/exports/sources.ts';
import { sendExport } from '../subscriptions/export.ts';
import { exportFile } from '../subscriptions/schemas.ts';
import { adminExportQuery } from './schemas.ts';

export default async function adminExportRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const { store } = app.deps;
  const tags = ['Admin'];

  app.get(
    '/api/admin/exports/ledger',
    {
      config: { access: { scope: 'admin:read' } },
      schema: {
        tags,
        summary: "Every pool's ledger lines in the global log's order, as CSV or JSONL, streamed, with a trailer",
        querystring: adminExportQuery,
        response: { 200: exportFile },
      },
    },
    async (request, reply) => {
      const { format, from, to } = request.query;
      return sendExport(reply, allLedgerSource(store, { from, to }), format, 'ledger-all');
    },
  );

  app.get(
    '/api/admin/exports/transfers',
    {
      config: { access: { scope: 'admin:read' } },
      schema: {
        tags,
        summary: 'The transfer journal: every transfer fact (id, status, amount, endpoints), as CSV or JSONL, streamed',
        querystring: adminExportQuery,
        response: { 200: exportFile },
      },
    },
    async (request, reply) => {
      const { format, from, to } = request.query;
      return sendExport(reply, transfersSource(store, { from, to }), format, 'transfers');
    },
  );
}
