// The user's pools (subscriptions) and a pool's ledger, over the same queries as
// GET /api/v1/users/me/subscriptions and GET …/subscriptions/{agentId}/ledger.
import { z } from 'zod';
import { subscriptionListJson } from '../../../projections/subscriptions/queries.ts';
import { subscriptionRecordSchema } from '../../../projections/subscriptions/record-schema.ts';
import { ledgerPage, ledgerParams, ledgerQuery, poolLedger } from '../../routes/subscriptions/ledger.ts';
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
  defineTool({
    name: 'get_pool_ledger',
    title: 'Get the ledger of my pool with an agent',
    description:
      "The history of the signed-in user's pool with one agent, replayed from its events, oldest first: each event (allocation moves, trades opened and closed, fees, " +
      'settlements at the venue) with its USD amounts and the running figures after it (allocated, current balance, withdrawable, the balance audit). ' +
      'Give `at` (ISO 8601 date-time) to see the pool as it was then: the history up to that moment and the subscription record of that time. ' +
      "walletContext defaults to the user's current one; page and limit (at most 100) page through long histories.",
    scopes: ['subscriptions:read'],
    input: z.object({ ...ledgerParams.shape, ...ledgerQuery.shape }),
    output: ledgerPage.shape.data,
    annotations: READ_ONLY,
    run: ({ deps, identity }, { agentId, ...query }) => poolLedger(deps, identity.userId, agentId, query),
  }),
];
