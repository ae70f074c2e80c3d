// Closing one of the user's agent trades: previewed by dry-deciding the same ClosePosition the
// command decides (100 % at the venue's price now) on the trade as it is, so the preview shows
// what the trade would pay back to its pool, the exit fee, the PnL at that price and the pool's
// figures after; confirmed with the REST route's command (api/routes/trades).
import { z } from 'zod';
import { MARKET_PRICES, marketDecider } from '../../../domain/market/decide.ts';
import { refuse } from '../../../domain/shared/errors.ts';
import { microToUsd, type MicroUsd } from '../../../domain/shared/money.ts';
import { priceText, type Price } from '../../../domain/shared/price.ts';
import { poolDecider } from '../../../domain/pool/decide.ts';
import { ledgerTermsOf, poolFigures } from '../../../domain/pool/ledger.ts';
import { tradeDecider, tradeReturnId, type Trade, type TradeEvent } from '../../../domain/trade/decide.ts';
import { poolEndpointOf } from '../../../domain/transfer/plan.ts';
import { tradeRecordJson } from '../../../projections/trades/queries.ts';
import { tradeIdParams } from '../../routes/trades/schemas.ts';
import type { McpToolContext } from '../tool.ts';
import { confirmationHandle, moneyTool } from './money-tool.ts';
import { current, dryRun, metadataOf, move, orRefused, refusedPreview, type Preview } from './preview.ts';

const closeInput = z.object({ ...tradeIdParams.shape, confirmationHandle });

/** The caller's own trade, pending or open, refused as the command refuses it. */
async function ownTrade(ctx: McpToolContext, tradeId: string): Promise<Trade> {
  const state = await current(ctx, tradeDecider, tradeId);
  if (state.status === 'none' || state.status === 'rejected' || poolEndpointOf(state.poolId).userId !== ctx.identity.userId) {
    throw refuse('TRADE_NOT_FOUND', 'you have no trade with this id');
  }
  if (state.status !== 'pending' && state.status !== 'open') throw refuse('TRADE_CLOSED', `the trade is ${state.status} already: nothing to close`);
  return state;
}

/** The mark the command closes at, looked up as it looks it up (commands/market/mark-price.ts). */
async function markOf(ctx: McpToolContext, token: string): Promise<Price> {
  const { prices } = await current(ctx, marketDecider, MARKET_PRICES);
  const price = prices.get(token) ?? prices.get(token.toUpperCase());
  if (price === undefined) throw refuse('NO_MARK_PRICE', `the venue has no price for ${token}: the trade cannot be closed at market now`);
  return price;
}

/**
 * The pool's figures once the close's return transfer credits it: the same CloseTrade the transfer's
 * ReturnMargin step decides (commands/transfers/steps.ts), dry-decided on the pool as it is now.
 */
async function poolAfter(ctx: McpToolContext, trade: Trade, returnedMicro: MicroUsd): Promise<Preview['after']> {
  const pool = await current(ctx, poolDecider, trade.poolId);
  const open = pool.followed ? pool.openTrades[trade.tradeId] : undefined;
  if (!open) return {};
  const data = { tradeId: trade.tradeId, realizedPnlMicro: returnedMicro - open.marginMicro, transferId: tradeReturnId(trade.tradeId) };
  const then = dryRun(poolDecider, pool, { type: 'CloseTrade', data }, metadataOf(ctx)).state;
  if (!then.followed) return {};
  const figures = poolFigures(then.ledger, ledgerTermsOf(then));
  return { poolAllocatedUsd: microToUsd(figures.allocatedUsd), poolWithdrawableUsd: microToUsd(figures.withdrawableUsd) };
}

const exitFeeOf = (events: TradeEvent[]): MicroUsd => events.reduce((sum, e) => sum + (e.type === 'TradeClosed' ? e.data.feeMicro : 0), 0);

async function previewClose(ctx: McpToolContext, { id }: { id: string }): Promise<Preview> {
  const summary = `Close trade ${id} at the venue's price`;
  let walletContext: Preview['walletContext'] = 'virtual';
  return orRefused<Preview>(
    async () => {
      const trade = await ownTrade(ctx, id);
      const pool = poolEndpointOf(trade.poolId);
      walletContext = pool.walletContext;
      const price = await markOf(ctx, trade.token);
      const { events } = dryRun(tradeDecider, trade, { type: 'ClosePosition', data: { closePercent: 100, price, reason: 'USER' } }, metadataOf(ctx));
      const settled = events.find((e) => e.type === 'TradeSettled');
      if (settled?.type !== 'TradeSettled') throw refuse('TRADE_CLOSED', 'the trade has nothing left to close');
      const feeMicro = exitFeeOf(events);
      const what = trade.status === 'pending' ? 'cancel its pending entry' : `close ${trade.side} ${trade.token} at ${priceText(price)} USD`;
      return {
        summary: `${summary}: ${what}; ${microToUsd(settled.data.returnedMicro)} USD (margin ${microToUsd(settled.data.marginMicro)}, PnL ${microToUsd(settled.data.realizedPnlMicro)}) back to the pool`,
        walletContext,
        moves: [move(`trade ${id}`, `pool of agent ${pool.agentId}`, settled.data.returnedMicro)],
        fees: feeMicro > 0 ? [{ name: 'venue exit fee', amountUsd: microToUsd(feeMicro) }] : [],
        feesUsd: microToUsd(feeMicro),
        realizedPnlUsd: microToUsd(settled.data.realizedPnlMicro),
        after: await poolAfter(ctx, trade, settled.data.returnedMicro),
        pendingAtVenue: false,
        refusal: null,
      };
    },
    (err) => refusedPreview(walletContext, summary, err),
  );
}

export const closeTradeTool = moneyTool({
  name: 'close_trade',
  title: 'Close one of my agent trades',
  description:
    "Close one of the user's agent trades (list_trades gives their ids) at the venue's price now; a trade still waiting for its entry is cancelled. " +
    "Its margin and realized PnL go back to the agent's pool, not to the wallet. The first call only previews at the current price (what returns to the pool, " +
    'the exit fee, the PnL; nothing moves) and returns a confirmationHandle; call again with the same id and that handle within minutes to close. ' +
    'The close happens at the price when confirmed, which may differ from the preview.',
  scopes: ['trades:write'],
  input: closeInput,
  preview: previewClose,
  async execute(ctx, { id }) {
    const { userId } = ctx.identity;
    const { trade } = await ctx.dispatch('CloseUserTrade', { tradeId: id, userId });
    const record = await tradeRecordJson(ctx.deps.pool, userId, id);
    if (record === null) throw refuse('TRADE_NOT_FOUND', 'you have no trade with this id');
    return {
      message: `Trade ${id} is ${trade.status}; realized PnL ${microToUsd(trade.realizedPnlMicro)} USD, its margin and PnL are back in the pool`,
      trade: JSON.parse(record),
    };
  },
});
