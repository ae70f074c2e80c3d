import type { FastifyInstance } from 'fastify';
import authRoutes from './auth/index.ts';
import userRoutes from './users/index.ts';
import agentRoutes from './agents/index.ts';
import developerRoutes from './developers/index.ts';
import developerSignalRoutes from './developers/signals.ts';
import developerFeeRoutes from './developers/fees.ts';
import developerWebhookRoutes from './developers/webhooks.ts';
import adminRoutes from './admin/index.ts';
import subscriptionRoutes from './subscriptions/index.ts';
import subscriptionLedgerRoutes from './subscriptions/ledger.ts';
import subscriptionFeeReceiptRoutes from './subscriptions/fee-receipts.ts';
import statementRoutes from './statements/index.ts';
import subscriptionLedgerExportRoutes from './subscriptions/export.ts';
import walletRoutes from './wallet/index.ts';
import signalRoutes from './signals/index.ts';
import tradeRoutes from './trades/index.ts';
import apiKeyRoutes from './apikeys/index.ts';
import oauthRoutes from './oauth/index.ts';
import mcpRoutes from '../mcp/index.ts';

// Every route group of the spec, one plugin each; app.ts registers them in this order.
export const routeGroups: Array<(app: FastifyInstance) => Promise<void>> = [
  authRoutes,
  userRoutes,
  agentRoutes,
  developerRoutes,
  developerSignalRoutes,
  developerFeeRoutes,
  developerWebhookRoutes,
  adminRoutes,
  subscriptionRoutes,
  subscriptionLedgerRoutes,
  subscriptionFeeReceiptRoutes,
  statementRoutes,
  subscriptionLedgerExportRoutes,
  walletRoutes,
  signalRoutes,
  tradeRoutes,
  apiKeyRoutes,
  oauthRoutes,
  mcpRoutes,
];
