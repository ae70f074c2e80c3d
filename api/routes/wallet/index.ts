import type { FastifyInstance, FastifyRequest } from 'fastify';
import { keyedMoveId } from '../../plugins/idempotency.ts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { refuse } from '../../../domain/shared/errors.ts';
import { microToUsd, toUnits, usdToMicro } from '../../../domain/shared/money.ts';
import { priceText, priceToNumber } from '../../../domain/shared/price.ts';
import { TOKEN_DECIMALS, unitsToTokens } from '../../../domain/wallet/lots.ts';
import { manualTransferId, sellMeaning, withdrawalDestination } from '../../../domain/wallet/sell.ts';
import { getWallet, walletDocument } from '../../../projections/wallets/queries.ts';
import { envelopeOf, ok } from '../../envelope.ts';
import { buyBody, levelsOf, sellBody, tradeResult, type TradeResultJson } from './schemas.ts';
import type { ManualTradeResult } from '../../../commands/wallet/commands.ts';

const tags = ['Wallet'];
const idempotencyHeader = z.looseObject({
  'idempotency-key': z.string().optional().describe('1 to 255 visible ASCII characters; a repeat within 24 hours answers the first response'),
});

/** The wallet as GET /api/v1/wallet shows it (also the answer of an administrator's deposit). */
export async function walletOf(app: FastifyInstance, userId: string) {
  const wallet = await getWallet(app.deps.pool, userId, usdToMicro(app.deps.config.VIRTUAL_START_USD));
  if (!wallet) throw refuse('USER_NOT_FOUND', 'user not found');
  return wallet;
}

/** The transfer id of a manual trade: stable for an Idempotency-Key (per user), else fresh. */
function manualTradeId(app: FastifyInstance, request: FastifyRequest): string {
  return manualTransferId(keyedMoveId(request) ?? app.deps.ids.uuid());
}

/** The spec's sell result (a buy answers the same shape) from the wallet's record of the trade. */
function resultOf(app: FastifyInstance, trade: ManualTradeResult, projected: boolean): TradeResultJson {
  const swap = trade.swap!;
  const usd = microToUsd(swap.usdMicro);
  const withdrawal = trade.side === 'withdraw';
  const amount = withdrawal ? usd : unitsToTokens(swap.units);
  const symbol = withdrawal ? app.deps.config.SPEND_STABLECOIN_SYMBOL : trade.mint;
  const message = withdrawal
    ? `Sent ${usd} ${symbol} to ${trade.destination}`
    : `${trade.side === 'buy' ? 'Bought' : 'Sold'} ${amount} ${symbol} for ${usd} USD at ${priceText(swap.price)} USD each`;
  return {
    success: true,
    transactionId: swap.txId,
    amount,
    tokenSymbol: symbol,
    message,
    timestamp: trade.endedAt!,
    tradeId: trade.transferId,
    openTradeUpdatePending: !projected,
    side: trade.side,
    walletContext: trade.walletContext,
    mint: trade.mint,
    priceUsd: priceToNumber(swap.price),
    amountUsd: usd,
    ...(trade.realizedPnlMicro !== undefined ? { realizedPnlUsd: microToUsd(trade.realizedPnlMicro) } : {}),
    ...(trade.destination !== undefined ? { destination: trade.destination } : {}),
  };
}

export default async function walletRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api/v1/wallet',
    {
      config: { access: { scope: 'wallet:read' } },
      schema: {
        tags,
        summary: "The caller's balances per wallet context (virtual and real), the current context and the open manual BUY lots",
        response: { 200: envelopeOf(walletDocument) },
      },
    },
    async (request) => ok(await walletOf(app, request.identity!.userId)),
  );

  app.post(
    '/api/v1/wallet/buy',
    {
      config: { access: { scope: 'wallet:trade' }, dispatches: ['ManualBuy'] },
      preHandler: app.idempotent,
      schema: {
        tags,
        summary: "Buy a token with the wallet context's cash at the venue's price: a manual BUY lot opens (optional stop-loss / take-profit)",
        headers: idempotencyHeader,
        body: buyBody,
        response: { 200: envelopeOf(tradeResult) },
      },
    },
    async (request) => {
      const { mint, amountUsd, walletContext } = request.body;
      const levels = levelsOf(request.body);
      const trade = await request.dispatch('ManualBuy', {
        userId: request.identity!.userId,
        transferId: manualTradeId(app, request),
        mint,
        amountMicro: usdToMicro(amountUsd),
        ...(walletContext ? { walletContext } : {}),
        ...(levels ? { levels } : {}),
      });
      return ok(resultOf(app, trade, request.writesProjected));
    },
  );

  app.post(
    '/api/v1/wallet/sell',
    {
      config: { access: { scope: 'wallet:trade' }, dispatches: ['ManualSell', 'ManualWithdraw'] },
      preHandler: app.idempotent,
      schema: {
        tags,
        summary: "Sell tokens of the caller's own manual BUY lots (oldest first, once the swap is final); agent positions are never touched",
        headers: idempotencyHeader,
        body: sellBody,
        response: { 200: envelopeOf(tradeResult) },
      },
    },
    async (request) => {
      const { amount, walletContext } = request.body;
      const { kind, mint } = sellMeaning(request.body.mint, app.deps.config.SPEND_STABLECOIN_MINT);
      if (kind === 'withdraw') {
        const destination = withdrawalDestination(request.body.destination);
        const trade = await request.dispatch('ManualWithdraw', {
          userId: request.identity!.userId,
          transferId: manualTradeId(app, request),
          mint,
          amountMicro: usdToMicro(amount),
          destination,
          ...(walletContext ? { walletContext } : {}),
        });
        return ok(resultOf(app, trade, request.writesProjected));
      }
      const levels = levelsOf(request.body);
      const trade = await request.dispatch('ManualSell', {
        userId: request.identity!.userId,
        transferId: manualTradeId(app, request),
        mint,
        units: Number(toUnits(amount, TOKEN_DECIMALS)),
        ...(walletContext ? { walletContext } : {}),
        ...(levels ? { levels } : {}),
      });
      return ok(resultOf(app, trade, request.writesProjected));
    },
  );
}
