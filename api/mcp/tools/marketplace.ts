// The marketplace tools: the followable agents, over the same queries and schemas as GET /api/v1/agents.
import { z } from 'zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { getFollowableAgentRow, listFollowableAgents, publicAgentRecord, toPublicAgentRecord } from '../../../projections/agents/queries.ts';
import { followableQuery } from '../../routes/agents/schemas.ts';
import { agentIdParams } from '../../routes/developers/record.ts';
import { defineTool, READ_ONLY, type McpTool } from '../tool.ts';

const agentPage = z.object({
  agents: z.array(publicAgentRecord),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  hasNextPage: z.boolean(),
});

export const marketplaceTools: McpTool[] = [
  defineTool({
    name: 'list_agents',
    title: 'List followable trading agents',
    description:
      "Lists the trading agents a user can follow (beta and live), newest first, with each one's fees, minimum allocation, venue and trading record (performanceStats). " +
      'Filter by venue or betaStatus; page through with page and limit (at most 100).',
    scopes: [],
    input: followableQuery,
    output: agentPage,
    annotations: READ_ONLY,
    async run({ deps }, query) {
      const { rows, total } = await listFollowableAgents(deps.pool, query);
      return { agents: rows.map(toPublicAgentRecord), total, page: query.page, limit: query.limit, hasNextPage: query.page * query.limit < total };
    },
  }),
  defineTool({
    name: 'get_agent',
    title: 'Get one trading agent with its performance',
    description:
      'One followable agent by id: its description and strategy, fees (monthlyPrice, successFeePercent), allocation limits, beta seats, ' +
      'and performanceStats (the trading record of its follower pools). Refused with AGENT_NOT_FOUND for an unknown or unlisted agent.',
    scopes: [],
    input: agentIdParams,
    output: publicAgentRecord,
    annotations: READ_ONLY,
    async run({ deps }, { id }) {
      const row = await getFollowableAgentRow(deps.pool, id);
      if (!row) throw refuse('AGENT_NOT_FOUND', 'agent not found');
      return toPublicAgentRecord(row);
    },
  }),
];
