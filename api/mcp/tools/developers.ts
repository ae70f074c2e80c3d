// The developer tools: the caller's agents, an agent's signal inbox, a dry-run replay of a signal
// and the subscribers dashboard, over the same queries and schemas as the developer routes
// (api/routes/developers). Only an agent's own developer reads its inbox and followers.
import { z } from 'zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { listSubscribers, subscriberItem, toSubscriberItem } from '../../../projections/agent-figures/queries.ts';
import { developerAgentRecord, getAgentRow, listDeveloperAgents, toDeveloperAgentRecord, type AgentRow } from '../../../projections/agents/queries.ts';
import { findSignal, signalInboxJson } from '../../../projections/signals/queries.ts';
import { signalInboxItemSchema } from '../../../projections/signals/record.ts';
import { replayResultSchema, replaySignal } from '../../../projections/signals/replay.ts';
import { paginationQuery } from '../../envelope.ts';
import { agentIdParams } from '../../routes/developers/record.ts';
import { signalInboxQuery, signalParams } from '../../routes/developers/signal-schemas.ts';
import { defineTool, READ_ONLY, type McpTool, type McpToolContext } from '../tool.ts';
import { pageData, pageOf } from './trades.ts';

const agentId = agentIdParams.shape.id.describe("the id of one of the developer's own agents (list_my_agents)");

/** The caller's own agent: AGENT_NOT_FOUND when unknown, NOT_AGENT_OWNER when another developer's, as the routes answer. */
async function ownAgent({ deps, identity }: McpToolContext, id: string, what: string): Promise<AgentRow> {
  const agent = await getAgentRow(deps.pool, id);
  if (!agent) throw refuse('AGENT_NOT_FOUND', 'agent not found');
  if (agent.developer_id !== identity.userId) throw refuse('NOT_AGENT_OWNER', `only the agent’s developer can read its ${what}`);
  return agent;
}

export const developerTools: McpTool[] = [
  defineTool({
    name: 'list_my_agents',
    title: 'List my agents (developer)',
    description:
      'The trading agents the signed-in developer listed, newest first, whatever their review status (pending, beta, live, rejected): settings, fees, ' +
      'signal detection rules and execution defaults, and the URL signals are sent to. page and limit (at most 100).',
    scopes: ['developer:read'],
    input: paginationQuery,
    output: pageOf(developerAgentRecord),
    annotations: READ_ONLY,
    async run(ctx, query) {
      const { rows, total } = await listDeveloperAgents(ctx.deps.pool, ctx.identity.userId, query);
      return pageData(
        rows.map((row) => toDeveloperAgentRecord(row, ctx.baseUrl)),
        total,
        query,
      );
    },
  }),
  defineTool({
    name: 'get_signal_inbox',
    title: "Read my agent's signal inbox (developer)",
    description:
      "The signals one of the developer's agents sent, newest first: the raw body as it arrived, how it was read (interpretation, rule version), its outcome " +
      "and the per-follower results (anonymized). Filter by outcome; page and limit (at most 100). Refused with NOT_AGENT_OWNER for another developer's agent.",
    scopes: ['developer:read'],
    input: z.object({ agentId, ...signalInboxQuery.shape }),
    output: pageOf(signalInboxItemSchema),
    annotations: READ_ONLY,
    async run(ctx, { agentId: id, ...query }) {
      const agent = await ownAgent(ctx, id, 'signals');
      const { itemsJson, total } = await signalInboxJson(ctx.deps.pool, ctx.deps.config.JWT_SECRET, agent.id, query);
      return pageData(JSON.parse(itemsJson), total, query);
    },
  }),
  defineTool({
    name: 'replay_signal',
    title: "Dry-run a signal with my agent's current rules (developer)",
    description:
      "Reads a stored signal of the developer's agent again with the agent's current detection rules and execution defaults, and answers how it is read now " +
      'next to how it was read when it arrived (changed says whether they differ; refused says why the body is refused now). A dry run: nothing is executed or traded.',
    // The REST replay needs developer:write even for its dry run: the tool asks no less.
    scopes: ['developer:write'],
    input: z.object({ agentId, signalId: signalParams.shape.signalId }),
    output: replayResultSchema,
    annotations: READ_ONLY,
    async run(ctx, { agentId: id, signalId }) {
      const agent = await ownAgent(ctx, id, 'signals');
      const signal = await findSignal(ctx.deps.pool, agent.id, signalId);
      if (!signal) throw refuse('SIGNAL_NOT_FOUND', 'the agent has no signal with this id');
      return replaySignal(signal, agent.record.signalDetectionRule, agent.record.signalExecutionDefaults);
    },
  }),
  defineTool({
    name: 'list_subscribers',
    title: "List my agent's subscribers (developer)",
    description:
      "The follower pools of one of the developer's agents (every wallet context, stopped ones too), latest opening first, anonymized (never a user id): " +
      'pricing model, when they subscribed, fees earned, claimed and claimable in USD, status. page and limit (at most 100).',
    scopes: ['developer:read'],
    input: z.object({ agentId, ...paginationQuery.shape }),
    output: pageOf(subscriberItem),
    annotations: READ_ONLY,
    async run(ctx, { agentId: id, ...query }) {
      const agent = await ownAgent(ctx, id, 'subscribers');
      const { rows, total } = await listSubscribers(ctx.deps.pool, agent.id, query);
      const pricing = { id: agent.id, monthlyPriceMicro: agent.record.monthlyPriceMicroUsd };
      return pageData(
        rows.map((row) => toSubscriberItem(row, pricing, ctx.deps.config.JWT_SECRET)),
        total,
        query,
      );
    },
  }),
];
