import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { getAgentRow, type AgentRow } from '../../../projections/agents/queries.ts';
import { findSignal, signalInboxJson } from '../../../projections/signals/queries.ts';
import { signalInboxItemSchema } from '../../../projections/signals/record.ts';
import { replayResultSchema, replaySignal } from '../../../projections/signals/replay.ts';
import type { Pool } from '../../../infra/db.ts';
import { envelopeOf, ok, okPaginatedRendered } from '../../envelope.ts';
import { signalAnswerOf, signalAnswerSchema } from '../signals/answer.ts';
import { agentIdParams, paginatedOf } from './record.ts';
import { replayBody, replayQuery, signalInboxQuery, signalParams } from './signal-schemas.ts';

const tags = ['Developer dashboard'];

/** The caller's own agent: 404 unknown, 403 another developer's (`what`: what only the developer may do). */
export async function ownAgent(pool: Pool, agentId: string, userId: string, what = 'read its signals'): Promise<AgentRow> {
  const agent = await getAgentRow(pool, agentId);
  if (!agent) throw refuse('AGENT_NOT_FOUND', 'agent not found');
  if (agent.developer_id !== userId) throw refuse('NOT_AGENT_OWNER', `only the agent’s developer can ${what}`);
  return agent;
}

/** The agent's signal inbox (owner only): every signal as it arrived and was read, and what it did. */
export default async function developerSignalRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/v1/developers/agents/:id/signals',
    {
      config: { access: { scope: 'developer:read' }, refusals: ['AGENT_NOT_FOUND', 'NOT_AGENT_OWNER'] },
      schema: {
        tags,
        summary: 'The agent’s signals, newest first: raw body, interpretation, rule version, outcome and per-follower results (anonymized)',
        params: agentIdParams,
        querystring: signalInboxQuery,
        response: { 200: paginatedOf(signalInboxItemSchema) },
      },
    },
    async (request, reply) => {
      const agent = await ownAgent(app.deps.pool, request.params.id, request.identity!.userId);
      const { itemsJson, total } = await signalInboxJson(app.deps.pool, app.deps.config.JWT_SECRET, agent.id, request.query);
      return okPaginatedRendered(reply, itemsJson, total, request.query);
    },
  );

  app.post(
    '/api/v1/developers/agents/:id/signals/:signalId/replay',
    {
      config: { access: { scope: 'developer:write' }, dispatches: ['ReplaySignal'], refusals: ['AGENT_NOT_FOUND', 'NOT_AGENT_OWNER', 'SIGNAL_NOT_FOUND'] },
      schema: {
        tags,
        summary:
          'Read a signal again with the agent’s current rules: a dry run by default; dryRun=false executes the new reading once, for a signal that executed nothing',
        params: signalParams,
        querystring: replayQuery,
        body: replayBody,
        response: { 200: envelopeOf(replayResultSchema.extend({ execution: signalAnswerSchema.optional() })) },
      },
    },
    async (request) => {
      const agent = await ownAgent(app.deps.pool, request.params.id, request.identity!.userId);
      const signal = await findSignal(app.deps.pool, agent.id, request.params.signalId);
      if (!signal) throw refuse('SIGNAL_NOT_FOUND', 'the agent has no signal with this id');
      const reading = replaySignal(signal, agent.record.signalDetectionRule, agent.record.signalExecutionDefaults);
      if (request.query.dryRun !== 'false' && request.body?.dryRun !== false) return ok(reading);
      const received = await request.dispatch('ReplaySignal', { agentId: agent.id, signalId: signal.signalId }, { answeredFromCommand: true });
      return ok({ ...reading, dryRun: false, execution: await signalAnswerOf(app.deps, received) });
    },
  );
}
