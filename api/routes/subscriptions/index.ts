import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { subscribeInput } from '../../../commands/subscriptions/subscribe-input.ts';
import { microToUsd, usdToMicro } from '../../../domain/shared/money.ts';
import { poolsGroupOf, subscriptionListAt } from '../../../projections/subscriptions/queries.ts';
import { remembersFloor } from '../../../projections/wait.ts';
import { subscriptionRecordOfPool } from '../../../projections/subscriptions/record.ts';
import { subscriptionActionResultSchema, subscriptionRecordSchema } from '../../../projections/subscriptions/record-schema.ts';
import { envelopeOf, ok, okRendered, renderedOk } from '../../envelope.ts';
import { agentParams, amountBody, contextQuery } from './schemas.ts';
import type { PoolMoveResult } from '../../../commands/subscriptions/commands.ts';

const tags = ['User'];

/** The actions' dispatch: answered from the command, after the caller's earlier writes (the count below reads a read model). */
const answeredWithCount = { answeredFromCommand: true, withEarlierWrites: true } as const;

/**
 * An action's command, then the spec's `strategyCount`: how many agents the caller follows in the
 * pool's wallet context after it (docs/decisions.md, "Subscriptions: strategyCount"). The caller's
 * earlier writes answered at once are awaited too, as a read of theirs would be: `act` dispatches with `answeredWithCount`.
 */
async function withStrategyCount<R extends Pick<PoolMoveResult, 'agentId' | 'walletContext' | 'pool'>>(request: FastifyRequest, act: () => Promise<R>) {
  const userId = request.identity!.userId;
  const { deps } = request.server;
  const result = await act();
  const others = await deps.strategyCounts.besides(userId, result.walletContext, result.agentId);
  return { result, strategyCount: others + (result.pool.followed ? 1 : 0) };
}

/** The spec's subscription action result, the record rendered from the pool the command left. */
function actionResult(result: PoolMoveResult, message: string, strategyCount: number) {
  const { pool } = result;
  const terms = pool.followed ? pool.terms : null;
  return ok({
    success: true,
    message,
    ...(pool.followed ? { subscription: subscriptionRecordOfPool(pool) } : {}),
    ...(terms ? { agentName: terms.agentName } : {}),
    ...(terms?.agentImageUrl ? { agentImageUrl: terms.agentImageUrl } : {}),
    strategyCount,
  });
}

const pendingNote = (r: PoolMoveResult) => (r.status === 'pending' ? ' (pending until the venue confirms it)' : '');

export default async function subscriptionRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const action = { 200: envelopeOf(subscriptionActionResultSchema) };

  app.post(
    '/api/v1/users/me/subscriptions',
    {
      config: { access: { scope: 'subscriptions:write' }, dispatches: ['FollowAgent'] },
      schema: {
        tags,
        summary: 'Follow an agent with a capital allocation (following again updates the same subscription)',
        body: subscribeInput,
        response: action,
      },
    },
    async (request) => {
      const { result: followed, strategyCount } = await withStrategyCount(request, () =>
        request.dispatch('FollowAgent', { userId: request.identity!.userId, input: request.body }, answeredWithCount),
      );
      const { agentName, agentImageUrl } = followed.terms;
      return ok({
        success: true,
        message: followed.created ? `Now following ${agentName}` : `Subscription to ${agentName} updated`,
        ...(followed.pool.followed ? { subscription: subscriptionRecordOfPool(followed.pool) } : {}),
        agentName,
        ...(agentImageUrl ? { agentImageUrl } : {}),
        strategyCount,
      });
    },
  );

  app.get(
    '/api/v1/users/me/subscriptions',
    {
      config: { access: { scope: 'subscriptions:read' } },
      schema: {
        tags,
        summary: "The caller's subscriptions (one per agent and wallet context)",
        querystring: contextQuery,
        response: { 200: envelopeOf(z.array(subscriptionRecordSchema)) },
      },
    },
    async (request, reply) => {
      const userId = request.identity!.userId;
      const walletContext = request.query.walletContext;
      // Remembered beside the identity, dropped when a batch changes one of the user's pools; never older than the caller's own
      // latest write (its position, known to every process through Redis, against the checkpoint the list was read at).
      const found = await app.deps.identities.lookup(
        `subscriptions:${userId}:${walletContext ?? ''}`,
        async () => {
          const { json, at } = await subscriptionListAt(app.deps.pool, userId, walletContext);
          return { answer: renderedOk(json), at };
        },
        () => [poolsGroupOf(userId)],
        remembersFloor(request.ownWrites),
        (m) => m.answer.bytes.length >> 10,
      );
      return okRendered(reply, found!.answer);
    },
  );

  /** Add and withdraw: the same body and answer, one command each. */
  const allocationMove = (move: 'add' | 'withdraw', summary: string, command: 'AddAllocation' | 'WithdrawAllocation', message: (usd: number) => string) =>
    app.post(
      `/api/v1/users/me/subscriptions/:agentId/allocation/${move}`,
      {
        config: { access: { scope: 'subscriptions:write' }, dispatches: [command] },
        schema: { tags, summary, params: agentParams, body: amountBody, response: action },
      },
      async (request) => {
        const { amountUsd: usd, walletContext } = request.body;
        const data = {
          userId: request.identity!.userId,
          agentId: request.params.agentId,
          amountMicro: usdToMicro(usd),
          ...(walletContext ? { walletContext } : {}),
        };
        const { result: moved, strategyCount } = await withStrategyCount(request, () => request.dispatch(command, data, answeredWithCount));
        return actionResult(moved, `${message(usd)}${pendingNote(moved)}`, strategyCount);
      },
    );
  allocationMove(
    'add',
    'Add capital from the wallet to a followed agent (real context: pending until the venue confirms)',
    'AddAllocation',
    (usd) => `Added ${usd} USD to the allocation`,
  );
  allocationMove(
    'withdraw',
    "Withdraw from the agent's unused allocation back to the wallet (open trades of this agent lock what they use)",
    'WithdrawAllocation',
    (usd) => `Withdrew ${usd} USD from the allocation`,
  );

  app.delete(
    '/api/v1/users/me/subscriptions/:agentId',
    {
      config: { access: { scope: 'subscriptions:write' }, dispatches: ['StopFollowing'] },
      schema: {
        tags,
        summary: 'Stop following: settles pending fees, returns the capital to the wallet, frees a beta seat (refused while trades are open)',
        params: agentParams,
        querystring: contextQuery,
        response: action,
      },
    },
    async (request) => {
      const { walletContext } = request.query;
      const { result: stopped, strategyCount } = await withStrategyCount(request, () =>
        request.dispatch(
          'StopFollowing',
          { userId: request.identity!.userId, agentId: request.params.agentId, ...(walletContext ? { walletContext } : {}) },
          answeredWithCount,
        ),
      );
      return actionResult(stopped, `Stopped following; ${microToUsd(stopped.amountMicro)} USD returned to the wallet${pendingNote(stopped)}`, strategyCount);
    },
  );
}
