import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isoDateTime } from '../../../domain/shared/time.ts';
import { eventOutcome, everFollowed, eventsAsOf, replayHistory, type HistoryStep, type PoolHistoryEvent } from '../../../domain/pool/history.ts';
import { feeReceipts, type FeeReceipt } from '../../../domain/pool/receipts.ts';
import { poolId } from '../../../domain/pool/state.ts';
import { refuse } from '../../../domain/shared/errors.ts';
import { microToUsd } from '../../../domain/shared/money.ts';
import { walletContextSchema, type WalletContext } from '../../../domain/wallet/events.ts';
import { currentWalletContextOf } from '../../../domain/wallet/context.ts';
import { poolHistory } from '../../../projections/subscriptions/audit.ts';
import { recordOf } from '../../../projections/subscriptions/record.ts';
import { allocationBalanceAuditSchema, subscriptionRecordSchema } from '../../../projections/subscriptions/record-schema.ts';
import { viewOfPool } from '../../../projections/subscriptions/view.ts';
import { getUser } from '../../../projections/users/queries.ts';
import type { Pool } from '../../../infra/db.ts';
import type { AppDeps } from '../../deps.ts';
import { ok, paginated, paginationQuery } from '../../envelope.ts';
import { paginatedOf } from '../developers/record.ts';
import { feeReceiptJson, feeReceiptSchema } from './schemas.ts';

const usd = z.number();
export const ledgerQuery = paginationQuery.extend({
  walletContext: walletContextSchema.optional(),
  at: isoDateTime('at').optional(),
});

/** The running figures after an event: the record's headline figures and its allocationBalanceAudit. */
const balances = z.object({
  allocatedUsd: usd,
  currentBalanceUsd: usd,
  withdrawableUsd: usd,
  pendingDeltaUsd: usd,
  allocationBalanceAudit: allocationBalanceAuditSchema,
});

export const ledgerItem = z.object({
  /** the event's place in the pool's history, from 1 */
  sequence: z.number(),
  eventId: z.string(),
  type: z.string(),
  time: z.string(),
  /** the event's own money fields, in USD; empty for a fact that moves no money */
  amounts: z.record(z.string(), usd),
  /** a settlement's outcome at the venue */
  outcome: z.enum(['confirmed', 'failed']).optional(),
  /** why a movement failed or was rejected, or a trade refused */
  reason: z.string().optional(),
  /** whether the pool was followed after the event (a stop leaves it unfollowed) */
  followed: z.boolean(),
  balances: balances.nullable(),
  /** on a FeesSettled line: the settlement's receipt, as GET …/fee-receipts gives it */
  feeReceipt: feeReceiptSchema.optional(),
});

export const ledgerPage = paginatedOf(ledgerItem).extend({
  data: paginatedOf(ledgerItem).shape.data.extend({
    /** with `at`: the subscription record as it was then, null when the pool was not followed then */
    subscription: subscriptionRecordSchema.nullable().optional(),
  }),
});

export function itemOf(step: HistoryStep, receipt: FeeReceipt | undefined): z.infer<typeof ledgerItem> {
  const record = step.state.followed ? recordOf(viewOfPool(step.state)) : null;
  return {
    sequence: step.index + 1,
    eventId: step.id,
    type: step.event.type,
    time: step.time,
    amounts: Object.fromEntries(Object.entries(step.amounts).map(([name, micro]) => [name, microToUsd(micro)])),
    ...eventOutcome(step.event),
    followed: step.state.followed,
    balances: record && {
      allocatedUsd: record.allocatedUsd,
      currentBalanceUsd: record.currentBalanceUsd,
      withdrawableUsd: record.withdrawableUsd,
      pendingDeltaUsd: record.pendingDeltaUsd,
      allocationBalanceAudit: record.allocationBalanceAudit,
    },
    ...(receipt ? { feeReceipt: feeReceiptJson(receipt) } : {}),
  };
}

/** The user's current context, as the commands pick it. */
async function currentContext(db: Pool, userId: string): Promise<WalletContext> {
  return currentWalletContextOf(await getUser(db, userId));
}

/**
 * The user's pool history, replayed from its stream (not from the read model): every event,
 * oldest first, with the running figures after it; `at` replays up to a point in time. Shared by
 * the route and the MCP tool.
 */
/**
 * The caller's pool's events, oldest first, up to `at` when given: 404 for a pool never followed
 * (a stopped pool's history stays readable). The ledger's and the fee receipts' one way in.
 */
export async function callersPoolHistory(
  deps: Pick<AppDeps, 'pool' | 'store'>,
  userId: string,
  agentId: string,
  query: { walletContext?: WalletContext | undefined; at?: string | undefined },
): Promise<PoolHistoryEvent[]> {
  const { walletContext = await currentContext(deps.pool, userId), at } = query;
  const history = await poolHistory(deps.store, poolId(userId, agentId, walletContext));
  if (!everFollowed(history)) throw refuse('SUBSCRIPTION_NOT_FOUND', 'you have never followed this agent in this wallet context');
  return at ? eventsAsOf(history, new Date(at)) : history;
}

export async function poolLedger(deps: Pick<AppDeps, 'pool' | 'store'>, userId: string, agentId: string, query: z.infer<typeof ledgerQuery>) {
  const { walletContext, at, ...page } = query;
  const history = await callersPoolHistory(deps, userId, agentId, { walletContext, at });
  const steps = replayHistory(history);
  const receipts = feeReceipts(history);
  const items = steps.slice((page.page - 1) * page.limit, page.page * page.limit).map((step) => itemOf(step, receipts.get(step.index)));
  const { data } = paginated(items, steps.length, page);
  if (!at) return data;
  const then = steps.at(-1)?.state;
  return { ...data, subscription: then?.followed ? recordOf(viewOfPool(then)) : null };
}

export const ledgerParams = z.object({ agentId: z.string().trim().min(1).max(200) });

export default async function subscriptionLedgerRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/v1/users/me/subscriptions/:agentId/ledger',
    {
      config: { access: { scope: 'subscriptions:read' }, refusals: ['SUBSCRIPTION_NOT_FOUND'] },
      schema: {
        tags: ['User'],
        summary: "The pool's ledger history: every event with the running figures after it, oldest first; `at` replays to a point in time",
        params: ledgerParams,
        querystring: ledgerQuery,
        response: { 200: ledgerPage },
      },
    },
    async (request) => ok(await poolLedger(app.deps, request.identity!.userId, request.params.agentId, request.query)),
  );
}
