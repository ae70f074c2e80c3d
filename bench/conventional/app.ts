// The conventional service's HTTP side: the same routes (follow, GET subscriptions, withdraw, wallet
// buy and sell), the same body, params and query schemas, the same error mapping. Two builds:
// - like-for-like: the same response schemas serialised through fastify-type-provider-zod, as ours;
// - lean: what a performance-minded team would write instead: the same input rules and auth checks,
//   prepared statements, and answers written with JSON.stringify, never re-validated.
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import fastifyJwt from '@fastify/jwt';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { envelopeOf, ok } from '../../api/envelope.ts';
import { agentParams, amountBody } from '../../api/routes/subscriptions/schemas.ts';
import { registerErrorHandling } from '../../api/plugins/errors.ts';
import { subscribeInput } from '../../commands/subscriptions/subscribe-input.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { microToUsd, toUnits, usdToMicro } from '../../domain/shared/money.ts';
import { priceToNumber } from '../../domain/shared/price.ts';
import { TOKEN_DECIMALS, unitsToTokens } from '../../domain/wallet/lots.ts';
import { withdrawalDestination } from '../../domain/wallet/sell.ts';
import { buyBody, levelsOf, sellBody, tradeResult, type TradeResultJson } from '../../api/routes/wallet/schemas.ts';

const unauthorized = () => refuse('AUTHENTICATION_REQUIRED', 'authentication required');
import { walletContextSchema } from '../../domain/wallet/events.ts';
import type { Pool } from '../../infra/db.ts';
import { subscriptionRecord } from '../../projections/subscriptions/record.ts';
import { subscriptionActionResultSchema, subscriptionRecordSchema } from '../../projections/subscriptions/record-schema.ts';
import type { SubscriptionRow } from '../../projections/subscriptions/view.ts';
import { follow, type Caller, type FollowConfig } from './follow.ts';
import { withdraw } from './withdraw.ts';
import { buy, sell, type TradeDeps, type Traded } from './trade.ts';

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

/** The spec's `strategyCount`: the agents the caller follows in the wallet context after the action (every row here is followed: no stop route). */
async function strategyCount(db: Pool, userId: string, walletContext: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>({
    name: 'conv-strategy-count',
    text: 'SELECT count(*)::int AS n FROM subscriptions WHERE user_id = $1 AND wallet_context = $2',
    values: [userId, walletContext],
  });
  return rows[0]!.n;
}

export interface ConventionalDeps {
  /** the lean build: no response schema (answers are not re-validated on the way out) */
  lean?: boolean;
  db: Pool;
  jwtSecret: string;
  follow: FollowConfig;
  trade: Omit<TradeDeps, 'db'> & { spendStablecoinMint: string };
}

/** The same header schema as our trade routes (this baseline keeps no Idempotency-Key: the bench's sells carry none). */
const idempotencyHeader = z.looseObject({ 'idempotency-key': z.string().optional() });

/** Our routes' trade answer (api/routes/wallet/index.ts `resultOf`), from the trade's row values. */
function resultOf(t: Traded): TradeResultJson {
  const [amount, usd, price] = [unitsToTokens(t.swap.units), microToUsd(t.swap.usdMicro), priceToNumber(t.swap.price)];
  const verb = t.side === 'buy' ? `Bought ${amount} ${t.mint} for` : `Sold ${amount} ${t.mint} for`;
  return {
    success: true,
    transactionId: t.swap.txId,
    amount,
    tokenSymbol: t.mint,
    message: `${verb} ${usd} USD at ${price} USD each`,
    timestamp: t.at,
    tradeId: t.transferId,
    openTradeUpdatePending: false,
    side: t.side,
    walletContext: t.walletContext,
    mint: t.mint,
    priceUsd: price,
    amountUsd: usd,
    ...(t.realizedPnlMicro !== undefined ? { realizedPnlUsd: microToUsd(t.realizedPnlMicro) } : {}),
  };
}

const noLevels = () => refuse('VALIDATION_FAILED', 'stop-loss and take-profit levels are not modelled by the conventional baseline');

export async function buildConventionalApp(deps: ConventionalDeps): Promise<FastifyInstance> {
  const root = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  root.setValidatorCompiler(validatorCompiler);
  root.setSerializerCompiler(serializerCompiler);
  /** A route's answer schema: the like-for-like build validates and serialises through it, the lean build writes the answer as it is. */
  const answers = <T extends z.ZodType>(schema: T) => (deps.lean ? {} : { response: { 200: envelopeOf(schema) } });
  registerErrorHandling(root);
  await root.register(fastifyJwt, { secret: deps.jwtSecret });
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.post('/api/v1/users/me/subscriptions', { schema: { body: subscribeInput, ...answers(subscriptionActionResultSchema) } }, async (request) => {
    const caller = await callerOf(root, deps.db, request);
    const { created, row } = await follow(deps.db, deps.follow, caller, request.body, request.id);
    return ok({
      success: true,
      message: created ? `Now following ${row.agent_name}` : `Subscription to ${row.agent_name} updated`,
      subscription: subscriptionRecord(row),
      agentName: row.agent_name,
      ...(row.agent_image_url ? { agentImageUrl: row.agent_image_url } : {}),
      strategyCount: await strategyCount(deps.db, caller.userId, row.wallet_context),
    });
  });

  app.post(
    '/api/v1/users/me/subscriptions/:agentId/allocation/withdraw',
    { schema: { params: agentParams, body: amountBody, ...answers(subscriptionActionResultSchema) } },
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
        strategyCount: await strategyCount(deps.db, caller.userId, row.wallet_context),
      });
    },
  );

  const trade: TradeDeps = { db: deps.db, ...deps.trade };
  app.post('/api/v1/wallet/buy', { schema: { headers: idempotencyHeader, body: buyBody, ...answers(tradeResult) } }, async (request) => {
    const caller = await callerOf(root, deps.db, request);
    const { mint, amountUsd, walletContext } = request.body;
    if (levelsOf(request.body)) throw noLevels();
    return ok(resultOf(await buy(trade, caller, { mint, amountMicro: usdToMicro(amountUsd), ...(walletContext ? { walletContext } : {}) })));
  });

  app.post('/api/v1/wallet/sell', { schema: { headers: idempotencyHeader, body: sellBody, ...answers(tradeResult) } }, async (request) => {
    const caller = await callerOf(root, deps.db, request);
    const { amount, walletContext } = request.body;
    const mint = request.body.mint ?? deps.trade.spendStablecoinMint;
    if (mint === deps.trade.spendStablecoinMint) {
      // the same refusal as ours for a withdrawal without its address; with one, the baseline does not model withdrawals
      withdrawalDestination(request.body.destination);
      throw refuse('UNPROCESSABLE', 'selling the spend stablecoin withdraws it to `destination`: not offered yet; name the `mint` of a manual BUY lot');
    }
    if (levelsOf(request.body)) throw noLevels();
    const units = Number(toUnits(amount, TOKEN_DECIMALS));
    return ok(resultOf(await sell(trade, caller, { mint, units, ...(walletContext ? { walletContext } : {}) })));
  });

  app.get(
    '/api/v1/users/me/subscriptions',
    {
      schema: {
        querystring: z.object({ walletContext: walletContextSchema.optional() }),
        ...answers(z.array(subscriptionRecordSchema)),
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
