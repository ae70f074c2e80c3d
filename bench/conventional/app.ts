// The conventional service's HTTP side: the same routes (follow, GET subscriptions, withdraw), the
// same body, params and query schemas, the same response schemas serialised through
// fastify-type-provider-zod, the same error mapping.
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import fastifyJwt from '@fastify/jwt';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { envelopeOf, ok } from '../../api/envelope.ts';
import { agentParams, amountBody } from '../../api/routes/subscriptions/schemas.ts';
import { registerErrorHandling } from '../../api/plugins/errors.ts';
import { subscribeInput } from '../../commands/subscriptions/subscribe-input.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { usdToMicro } from '../../domain/shared/money.ts';

const unauthorized = () => refuse('AUTHENTICATION_REQUIRED', 'authentication required');
import { walletContextSchema } from '../../domain/wallet/events.ts';
import type { Pool } from '../../infra/db.ts';
import { subscriptionActionResultSchema, subscriptionRecord, subscriptionRecordSchema, type SubscriptionRow } from '../../projections/subscriptions/record.ts';
import { follow, type Caller, type FollowConfig } from './follow.ts';
import { withdraw } from './withdraw.ts';

const BEARER = /^Bearer\s+(\S+)$/i;

/** What our auth plugin does per request: verify the JWT, then the user and a session not ended, by primary key. */
async function callerOf(app: FastifyInstance, db: Pool, request: FastifyRequest): Promise<Caller> {
  const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
  if (!token) throw unauthorized();
  let payload: { sub?: unknown; sid?: unknown };
  try {
    payload = app.jwt.verify(token);
  } catch {
    throw unauthorized();
  }
  if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') throw unauthorized();
  const { rows } = await db.query<{ id: string; virtual_wallet_mode: boolean }>({
    name: 'conv-caller',
    text: `SELECT u.id, u.virtual_wallet_mode FROM users u
       JOIN user_sessions s ON s.user_id = u.id AND s.id = $2 AND s.ended_at IS NULL
      WHERE u.id = $1`,
    values: [payload.sub, payload.sid],
  });
  const row = rows[0];
  if (!row) throw unauthorized();
  return { userId: row.id, virtualWalletMode: row.virtual_wallet_mode };
}

export interface ConventionalDeps {
  db: Pool;
  jwtSecret: string;
  follow: FollowConfig;
}

export async function buildConventionalApp(deps: ConventionalDeps): Promise<FastifyInstance> {
  const root = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  root.setValidatorCompiler(validatorCompiler);
  root.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(root);
  await root.register(fastifyJwt, { secret: deps.jwtSecret });
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/api/v1/users/me/subscriptions',
    { schema: { body: subscribeInput, response: { 200: envelopeOf(subscriptionActionResultSchema) } } },
    async (request) => {
      const caller = await callerOf(root, deps.db, request);
      const { created, row } = await follow(deps.db, deps.follow, caller, request.body, request.id);
      return ok({
        success: true,
        message: created ? `Now following ${row.agent_name}` : `Subscription to ${row.agent_name} updated`,
        subscription: subscriptionRecord(row),
        agentName: row.agent_name,
        ...(row.agent_image_url ? { agentImageUrl: row.agent_image_url } : {}),
      });
    },
  );

  app.post(
    '/api/v1/users/me/subscriptions/:agentId/allocation/withdraw',
    { schema: { params: agentParams, body: amountBody, response: { 200: envelopeOf(subscriptionActionResultSchema) } } },
    async (request) => {
      const caller = await callerOf(root, deps.db, request);
      const { amountUsd: usd, walletContext } = request.body;
      const { row, pending } = await withdraw(
        deps.db,
        caller,
        { agentId: request.params.agentId, amountMicro: usdToMicro(usd), ...(walletContext ? { walletContext } : {}) },
        request.id,
      );
      return ok({
        success: true,
        message: `Withdrew ${usd} USD from the allocation${pending ? ' (pending until the venue confirms it)' : ''}`,
        subscription: subscriptionRecord(row),
        agentName: row.agent_name,
        ...(row.agent_image_url ? { agentImageUrl: row.agent_image_url } : {}),
      });
    },
  );

  app.get(
    '/api/v1/users/me/subscriptions',
    {
      schema: {
        querystring: z.object({ walletContext: walletContextSchema.optional() }),
        response: { 200: envelopeOf(z.array(subscriptionRecordSchema)) },
      },
    },
    async (request) => {
      const caller = await callerOf(root, deps.db, request);
      const { rows } = await deps.db.query<SubscriptionRow>({
        name: 'conv-list',
        text: `SELECT * FROM subscriptions WHERE user_id = $1 AND ($2::text IS NULL OR wallet_context = $2)
               ORDER BY subscribed_at, agent_id, wallet_context`,
        values: [caller.userId, request.query.walletContext ?? null],
      });
      return ok(rows.map(subscriptionRecord));
    },
  );
  return root;
}
