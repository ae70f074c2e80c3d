import type { FastifyInstance } from 'fastify';
import developerAgentReviewRoutes from './developer-agents.ts';

// Admin routes (under /api/admin), one file per concern.
export default async function adminRoutes(app: FastifyInstance): Promise<void> {
  await app.register(developerAgentReviewRoutes);
}
