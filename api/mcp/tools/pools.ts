// The user's pools (subscriptions), over the same query as GET /api/v1/users/me/subscriptions.
import { z } from 'zod';
import { subscriptionListJson } from '../../../projections/subscriptions/queries.ts';
import { subscriptionRecordSchema } from '../../../projections/subscriptions/record-schema.ts';
import { contextQuery } from '../../routes/subscriptions/schemas.ts';
import { defineTool, READ_ONLY, type McpTool } from '../tool.ts';

export const poolTools: McpTool[] = [
  defineTool({
    name: 'list_my_pools',
    title: 'List my agent pools',
    description:
      'The pools the signed-in user gives to agents (one per agent and wallet context): allocation, what is withdrawable, PnL, fees and status, ' +
      'the audit figures of the subscription records. Filter by walletContext (virtual or real).',
    scopes: ['subscriptions:read'],
    input: contextQuery,
    output: z.object({ pools: z.array(subscriptionRecordSchema) }),
    annotations: READ_ONLY,
    async run({ deps, identity }, { walletContext }) {
      return { pools: JSON.parse(await subscriptionListJson(deps.pool, identity.userId, walletContext)) };
    },
  }),
];
