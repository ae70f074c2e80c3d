import type { FastifyInstance } from 'fastify';
import adminAuditRoutes from './audit.ts';
import adminExportRoutes from './exports.ts';
import developerAgentReviewRoutes from './developer-agents.ts';
import adminMarketRoutes from './market.ts';
import adminOperationsRoutes from './operations.ts';
import adminWalletRoutes from './wallets.ts';
import adminUserRoutes from './users.ts';

// Admin routes (under /api/admin), one file per concern.
export default async function adminRoutes(app: FastifyInstance): Promise<void> {
  await app.register(developerAgentReviewRoutes);
  await app.register(adminWalletRoutes);
  await app.register(adminMarketRoutes);
  await app.register(adminAuditRoutes);
  await app.register(adminUserRoutes);
  await app.register(adminOperationsRoutes);
  await app.register(adminExportRoutes);
}
