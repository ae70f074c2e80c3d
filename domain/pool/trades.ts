// The pool's side of its agent's trades: a group opened with the margins the limits give it or
// refused whole, then each trade marked and closed. decide.ts routes these commands here.
import { z } from 'zod';
import type { Command } from '../shared/decider.ts';
import { invariant, refuse } from '../shared/errors.ts';
import type { MicroUsd } from '../shared/money.ts';
import { parsed } from '../trade/commands.ts';
import { sideSchema } from '../trade/events.ts';
import { transferPlanSchema } from '../transfer/plan.ts';
import type { PoolEvent } from './events.ts';
import { checkTrades, tradeLimitsSchema, tradeSizeSchema } from './limits.ts';
import type { SkipReason } from './skip-reasons.ts';
import { followed } from './queries.ts';
import { poolId, type FollowedPool, type PoolState } from './state.ts';

/** One trade of a group as a signal asks for it; its margin is the pool's to decide. */
export const tradeAskSchema = z
  .object({
    tradeId: z.string().min(1),
    size: tradeSizeSchema,
    token: z.string().min(1),
    side: sideSchema,
    /** the signal that opens it: a follow-up naming it finds the trade */
    signalId: z.string().min(1).nullable(),
    /** the plan paying the trade its margin, from this pool to the trade; its amount is set to the margin decided */
    transfer: transferPlanSchema.optional(),
  })
  .refine((t) => !t.transfer || (t.transfer.from.kind === 'pool' && t.transfer.to.kind === 'trade' && t.transfer.to.tradeId === t.tradeId), {
    message: "a trade's transfer pays that trade from its pool",
    path: ['transfer'],
  });
export type TradeAsk = z.infer<typeof tradeAskSchema>;

/** A group of trades (one signal): opened all, or refused all, once. */
export const openTradeDataSchema = z.object({
  limits: tradeLimitsSchema,
  trades: z
    .array(tradeAskSchema)
    .min(1)
    .max(10)
    .refine((trades) => new Set(trades.map((t) => t.tradeId)).size === trades.length, 'the trades of a group have distinct ids'),
});

/** `released`: the trade's destination refused it and gave its margin back (PnL 0); `transferId`: the transfer that closes it. */
export const closeTradeDataSchema = z.object({
  tradeId: z.string().min(1),
  realizedPnlMicro: z.number().int(),
  transferId: z.string().min(1).optional(),
  released: z.literal(true).optional(),
});

/** A trade of the agent in this pool (signals send these; tests enter them directly). */
export type OpenTrade = Command<'OpenTrade', z.infer<typeof openTradeDataSchema>>;
export type MarkTrade = Command<'MarkTrade', { tradeId: string; unrealizedPnlMicro: MicroUsd }>;
export type CloseTrade = Command<'CloseTrade', z.infer<typeof closeTradeDataSchema>>;

/** A trade's transfer is paid by this pool to a trade held by this pool. */
function ensurePaidByPool(pool: FollowedPool, { tradeId, transfer }: TradeAsk): void {
  if (!transfer) return;
  const { from, to } = transfer;
  const ours =
    from.kind === 'pool' && poolId(from.userId, from.agentId, from.walletContext) === pool.poolId && to.kind === 'trade' && to.poolId === pool.poolId;
  invariant(ours, `the transfer of trade ${tradeId} is not paid by this pool to its trade`);
}

/**
 * A group of trades: opened all with the margins the limits give them (limits.ts), or refused all
 * for the first reason, recorded so that the refusal is final; a test-trading pool records them
 * simulated instead of opened. A group is decided once, whole: a repeat changes nothing, and one
 * mixing decided and new trade ids is malformed.
 */
export function openTrade({ data, metadata }: OpenTrade, state: PoolState): PoolEvent[] {
  const group = parsed(openTradeDataSchema, data);
  const known = group.trades.filter((t) => state.trades.has(t.tradeId)).length;
  if (known === group.trades.length) return [];
  invariant(known === 0, 'a group of trades is decided once, whole: some of its trade ids are decided already, others not');
  const at = metadata.now.toISOString();
  const refused = (reason: SkipReason, message: string): PoolEvent[] =>
    group.trades.map(({ tradeId }) => ({ type: 'TradeRefused', data: { tradeId, reason, message, at } }));
  if (!state.followed) return refused('POOL_CLOSED', 'the user does not follow this agent in this wallet context');
  for (const trade of group.trades) ensurePaidByPool(state, trade);
  const check = checkTrades(state, group, metadata.now);
  if (!check.ok) return refused(check.reason, check.message);
  // Test trading: the trades the pool would open, on paper, beside its real capital; nothing is locked.
  if (state.settings.tradeMode === 'TEST_TRADING') {
    return group.trades.map(
      ({ tradeId, token, side, signalId }, i): PoolEvent => ({
        type: 'TradeSimulated',
        data: { tradeId, marginMicro: check.margins[i]!, token, side, signalId, at },
      }),
    );
  }
  return group.trades.map(({ tradeId, token, side, signalId, transfer }, i): PoolEvent => {
    const marginMicro = check.margins[i]!;
    // The pool's record is the truth: the transfer pays the margin it decided.
    const paid = transfer ? { transfer: { ...transfer, amountMicro: marginMicro } } : {};
    return { type: 'TradeOpened', data: { tradeId, marginMicro, at, token, side, signalId, ...paid } };
  });
}

function openTradeOf(state: PoolState, tradeId: string) {
  const pool = followed(state);
  const trade = pool.openTrades[tradeId];
  if (!trade) throw refuse('TRADE_NOT_FOUND', `no open trade ${tradeId} in this pool`);
  return trade;
}

export function markTrade({ data, metadata }: MarkTrade, state: PoolState): PoolEvent[] {
  const trade = openTradeOf(state, data.tradeId);
  if (trade.unrealizedMicro === data.unrealizedPnlMicro) return [];
  return [{ type: 'TradeMarked', data: { ...data, at: metadata.now.toISOString() } }];
}

/** Closes an open trade once: a closed or refused one changes nothing. */
export function closeTrade({ data, metadata }: CloseTrade, state: PoolState): PoolEvent[] {
  const close = parsed(closeTradeDataSchema, data);
  const fate = state.trades.get(close.tradeId);
  if (fate === 'closed' || fate === 'refused') return [];
  const trade = openTradeOf(state, close.tradeId);
  invariant(!close.released || close.realizedPnlMicro === 0, 'a released trade gives its margin back whole: its PnL is 0');
  // A position cannot lose more than its margin: the venue liquidates it first (domain/trade/position.ts caps the loss).
  invariant(close.realizedPnlMicro >= -trade.marginMicro, 'a trade cannot lose more than its margin');
  return [{ type: 'TradeClosed', data: { ...close, at: metadata.now.toISOString() } }];
}
