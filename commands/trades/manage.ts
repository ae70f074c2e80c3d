// Commands on one agent trade after it opened: a signal's follow-up, the price watcher's tick, the
// user's close. Whatever ends the trade runs its return transfer at once (the recovery worker
// finishes one a crash interrupted: the trade's TradeSettled is the debit it resumes from).
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolEndpointOf, tradeReturnPlan } from '../../domain/transfer/plan.ts';
import { planned } from '../../domain/transfer/process.ts';
import type { Command, CommandBody } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { poolId as poolIdOf } from '../../domain/pool/state.ts';
import { tradeDecider, type Trade, type TradeCommand, type TradeEvent } from '../../domain/trade/decide.ts';
import type { Tools } from '../tools.ts';
import { markPriceOf } from '../market/mark-price.ts';
import { runTransfer } from '../transfers/run.ts';
import type { MarkTradeData, CloseTradeData } from './commands.ts';

/** A command on one trade; when it ends the trade, the trade's return transfer runs. */
export async function manageTrade(tools: Tools, tradeId: string, command: CommandBody<TradeCommand>): Promise<{ trade: Trade; events: TradeEvent[] }> {
  const { state, events } = await tools.execute(tradeDecider, tradeId, command);
  for (const event of events) if (event.type === 'TradeSettled') await runTransfer(tools, planned(tradeReturnPlan(event.data)));
  if (state.status === 'none' || state.status === 'rejected') throw refuse('TRADE_NOT_FOUND', `no trade ${tradeId}`);
  // The pool's unrealized PnL follows the trade: what remains marked, plus what its exits realized so far.
  const marked = [...events].reverse().find((e) => e.type === 'TradeMarked');
  if (marked?.type === 'TradeMarked' && state.status === 'open') {
    const { userId, agentId, walletContext } = poolEndpointOf(state.poolId);
    await tools.execute(poolDecider, poolIdOf(userId, agentId, walletContext), {
      type: 'MarkTrade',
      data: { tradeId, unrealizedPnlMicro: marked.data.unrealizedPnlMicro + state.realizedPnlMicro },
    });
  }
  return { trade: state, events };
}

/** The price watcher's tick for one trade: fills, stops, targets, trailing, the mark. */
export async function markTradePrice({ data }: Command<'MarkTradePrice', MarkTradeData>, tools: Tools): Promise<{ status: Trade['status'] }> {
  const { trade } = await manageTrade(tools, data.tradeId, { type: 'MarkPrice', data: { price: data.price } });
  return { status: trade.status };
}

/** The user closes one of their agent trades at the venue's price (a pending entry is cancelled). */
export async function closeTradeByUser({ data }: Command<'CloseUserTrade', CloseTradeData>, tools: Tools): Promise<{ trade: Trade }> {
  const { state } = await tools.load(tradeDecider, data.tradeId);
  if (state.status === 'none' || state.status === 'rejected' || poolEndpointOf(state.poolId).userId !== data.userId) {
    throw refuse('TRADE_NOT_FOUND', 'you have no trade with this id');
  }
  const price = await markPriceOf(tools, state.token);
  if (price === null) throw refuse('NO_MARK_PRICE', `the venue has no price for ${state.token}: the trade cannot be closed at market now`);
  const { trade } = await manageTrade(tools, data.tradeId, { type: 'ClosePosition', data: { closePercent: 100, price, reason: 'USER' } });
  return { trade };
}
