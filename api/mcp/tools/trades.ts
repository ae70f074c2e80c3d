// The user's agent trades, over the same query and schemas as GET /api/v1/trades.
import type { z } from 'zod';
import { tradeListJson } from '../../../projections/trades/queries.ts';
import { tradeRecordSchema } from '../../../projections/trades/record.ts';
import { paginated, type PaginationQuery } from '../../envelope.ts';
import { paginatedOf } from '../../routes/developers/record.ts';
import { tradeListQuery } from '../../routes/trades/schemas.ts';
import { defineTool, READ_ONLY, type McpTool } from '../tool.ts';

/** A page of items as the REST envelope's `data` holds it. */
export const pageOf = <T extends z.ZodType>(item: T) => paginatedOf(item).shape.data;

/** A page as the REST list answers it (its items and pagination), without the envelope. */
export const pageData = <T>(items: T[], total: number, query: PaginationQuery) => paginated(items, total, query).data;

export const tradeTools: McpTool[] = [
  defineTool({
    name: 'list_trades',
    title: 'List my agent trades',
    description:
      "The trades the agents the signed-in user follows opened in the user's pools, newest first: token, side, leverage, entry, size, margin, stop-loss and targets, " +
      'status (pending, open, closed, cancelled, expired, rejected), realized and unrealized PnL in USD, fees paid. Filter by agentId, status or walletContext; ' +
      "page and limit (at most 100). An open trade's id is what close_trade takes.",
    scopes: ['trades:read'],
    input: tradeListQuery,
    output: pageOf(tradeRecordSchema),
    annotations: READ_ONLY,
    async run({ deps, identity }, query) {
      const { itemsJson, total } = await tradeListJson(deps.pool, identity.userId, query);
      return pageData(JSON.parse(itemsJson), total, query);
    },
  }),
];
