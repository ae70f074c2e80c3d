// The wallet's money tools: a manual buy and sell, previewed at the venue's price now (the buy's
// debit, the sell's lots dry-decided on the wallet as it is), made with the REST routes' commands
// and data (api/routes/wallet). A sell of the spend stablecoin is, as on REST, a withdrawal of the
// real context's cash to an address on chain (its debit dry-decided the same way). The transfer id
// derives from the confirmation, as the REST one derives from the Idempotency-Key, so a repeat
// finds the trade already made.
import { z } from 'zod';
import { MARKET_PRICES, marketDecider } from '../../../domain/market/decide.ts';
import { refuse } from '../../../domain/shared/errors.ts';
import { microToUsd, toUnits, usdToMicro } from '../../../domain/shared/money.ts';
import { priceText, priceToNumber, type Price } from '../../../domain/shared/price.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { walletDecider } from '../../../domain/wallet/decide.ts';
import { ensureLevelsAgainstMark, proceedsFor, TOKEN_DECIMALS, unitsFor, unitsToTokens } from '../../../domain/wallet/lots.ts';
import type { WalletContext } from '../../../domain/wallet/events.ts';
import { ensureWithdrawable, manualTransferId, sellMeaning, withdrawalDestination } from '../../../domain/wallet/sell.ts';
import { balanceOf } from '../../../domain/wallet/state.ts';
import { buyBody, levelsOf, sellBody } from '../../routes/wallet/schemas.ts';
import type { McpToolContext } from '../tool.ts';
import { confirmationHandle, moneyTool, type MoneyResult } from './money-tool.ts';
import { contextOf, current, dryRun, metadataOf, move, orRefused, refusedPreview, type Preview } from './preview.ts';
import type { ManualTradeResult } from '../../../commands/wallet/commands.ts';

const SCOPES = ['wallet:trade'] as const;
const HOW =
  ' The first call only previews at the current price (nothing moves) and returns a confirmationHandle; call again with the same arguments and that handle within minutes to trade.';

const buyInput = z.object({ ...buyBody.shape, confirmationHandle }).strict();
const sellInput = z.object({ ...sellBody.shape, confirmationHandle }).strict();
type BuyArgs = Omit<z.infer<typeof buyInput>, 'confirmationHandle'>;
type SellArgs = Omit<z.infer<typeof sellInput>, 'confirmationHandle'>;

const priceOf = async (ctx: McpToolContext, mint: string): Promise<Price> => {
  const price = (await current(ctx, marketDecider, MARKET_PRICES)).prices.get(mint);
  if (price === undefined) throw refuse('NO_MARK_PRICE', `the venue has no price for ${mint}: it cannot be traded until one is set`);
  return price;
};

const startMicro = (ctx: McpToolContext) => usdToMicro(ctx.deps.config.VIRTUAL_START_USD);

async function previewBuy(ctx: McpToolContext, args: BuyArgs): Promise<Preview> {
  const walletContext = await contextOf(ctx, args.walletContext);
  const amountMicro = usdToMicro(args.amountUsd);
  const summary = `Buy ${args.mint} for ${args.amountUsd} USD of the ${walletContext} wallet at the venue's price`;
  return orRefused<Preview>(
    async () => {
      const { userId } = ctx.identity;
      const [price, wallet] = await Promise.all([priceOf(ctx, args.mint), current(ctx, walletDecider, userId)]);
      const levels = levelsOf(args);
      if (levels) ensureLevelsAgainstMark(levels, price);
      const transfer: TransferPlan = {
        transferId: 'manual-preview',
        amountMicro,
        from: { kind: 'wallet', userId, walletContext },
        to: { kind: 'lots', userId, walletContext, mint: args.mint, ...(levels ? { levels } : {}) },
      };
      const after = dryRun(walletDecider, wallet, { type: 'DebitWallet', data: { transfer, virtualStartMicro: startMicro(ctx) } }, metadataOf(ctx)).state;
      const tokens = unitsToTokens(unitsFor(amountMicro, price));
      return walletPreview(
        `${summary}: about ${tokens} ${args.mint} at ${priceText(price)} USD each`,
        walletContext,
        `manual lots of ${args.mint}`,
        amountMicro,
        balanceOf(after, walletContext, startMicro(ctx)),
      );
    },
    (err) => refusedPreview(walletContext, summary, err),
  );
}

/** A preview of money leaving the wallet for `to`, with no fee, settled at once: the wallet's balance after it. */
function walletPreview(summary: string, walletContext: WalletContext, to: string, amountMicro: number, balanceAfterMicro: number): Preview {
  return {
    summary,
    walletContext,
    moves: [move(`${walletContext} wallet`, to, amountMicro)],
    fees: [],
    feesUsd: 0,
    after: { walletBalanceUsd: microToUsd(balanceAfterMicro) },
    pendingAtVenue: false,
    refusal: null,
  };
}

/** A sell of the spend stablecoin: `amount` USD of the real context's cash to `destination`, the debit dry-decided as ManualWithdraw's transfer decides it. */
async function previewWithdraw(ctx: McpToolContext, args: SellArgs, mint: string): Promise<Preview> {
  const walletContext = await contextOf(ctx, args.walletContext);
  const { SPEND_STABLECOIN_SYMBOL: symbol } = ctx.deps.config;
  const summary = `Withdraw ${args.amount} ${symbol} of the ${walletContext} wallet to ${args.destination ?? 'an address'} on chain`;
  return orRefused<Preview>(
    async () => {
      const destination = withdrawalDestination(args.destination);
      ensureWithdrawable(walletContext);
      const { userId } = ctx.identity;
      const amountMicro = usdToMicro(args.amount);
      const transfer: TransferPlan = {
        transferId: 'manual-preview',
        amountMicro,
        from: { kind: 'wallet', userId, walletContext },
        to: { kind: 'address', userId, walletContext, mint, destination },
      };
      const wallet = await current(ctx, walletDecider, userId);
      const after = dryRun(walletDecider, wallet, { type: 'DebitWallet', data: { transfer, virtualStartMicro: startMicro(ctx) } }, metadataOf(ctx)).state;
      return walletPreview(summary, walletContext, `address ${destination}`, amountMicro, balanceOf(after, walletContext, startMicro(ctx)));
    },
    (err) => refusedPreview(walletContext, summary, err),
  );
}

async function previewSell(ctx: McpToolContext, args: SellArgs): Promise<Preview> {
  const walletContext = await contextOf(ctx, args.walletContext);
  const { kind, mint } = sellMeaning(args.mint, ctx.deps.config.SPEND_STABLECOIN_MINT);
  if (kind === 'withdraw') return previewWithdraw(ctx, args, mint);
  const summary = `Sell ${args.amount} ${mint} of the ${walletContext} wallet's manual lots at the venue's price`;
  return orRefused<Preview>(
    async () => {
      const { userId } = ctx.identity;
      const [price, wallet] = await Promise.all([priceOf(ctx, mint), current(ctx, walletDecider, userId)]);
      const units = Number(toUnits(args.amount, TOKEN_DECIMALS));
      const levels = levelsOf(args);
      if (levels) ensureLevelsAgainstMark(levels, price);
      const transfer: TransferPlan = {
        transferId: 'manual-preview',
        amountMicro: 0,
        from: { kind: 'lots', userId, walletContext, mint, units, ...(levels ? { levels } : {}) },
        to: { kind: 'wallet', userId, walletContext },
      };
      dryRun(walletDecider, wallet, { type: 'RequestSell', data: { transfer } }, metadataOf(ctx));
      const proceeds = proceedsFor(units, price);
      return {
        summary: `${summary}: about ${microToUsd(proceeds)} USD at ${priceText(price)} USD each`,
        walletContext,
        moves: [move(`manual lots of ${mint}`, `${walletContext} wallet`, proceeds)],
        fees: [],
        feesUsd: 0,
        after: { walletBalanceUsd: microToUsd(balanceOf(wallet, walletContext, startMicro(ctx)) + proceeds) },
        pendingAtVenue: false,
        refusal: null,
      };
    },
    (err) => refusedPreview(walletContext, summary, err),
  );
}

/** What the trade did, as the REST answer says it (a withdrawal: the USD sent and where). */
const traded = (ctx: McpToolContext, t: ManualTradeResult): MoneyResult => {
  const swap = t.swap!;
  const base = {
    tradeId: t.transferId,
    transactionId: swap.txId,
    side: t.side,
    mint: t.mint,
    walletContext: t.walletContext,
    amountUsd: microToUsd(swap.usdMicro),
  };
  if (t.side === 'withdraw') {
    const symbol = ctx.deps.config.SPEND_STABLECOIN_SYMBOL;
    return {
      message: `Sent ${microToUsd(swap.usdMicro)} ${symbol} to ${t.destination}`,
      ...base,
      amount: microToUsd(swap.usdMicro),
      tokenSymbol: symbol,
      destination: t.destination,
    };
  }
  const verb = t.side === 'buy' ? 'Bought' : 'Sold';
  return {
    message: `${verb} ${unitsToTokens(swap.units)} ${t.mint} for ${microToUsd(swap.usdMicro)} USD at ${priceText(swap.price)} USD each`,
    ...base,
    amount: unitsToTokens(swap.units),
    priceUsd: priceToNumber(swap.price),
    ...(t.realizedPnlMicro !== undefined ? { realizedPnlUsd: microToUsd(t.realizedPnlMicro) } : {}),
  };
};

/** What a buy and a sell send alike: the caller, a transfer id of the confirmation's, and the optional context and levels. */
function manualTrade(ctx: McpToolContext, args: Parameters<typeof levelsOf>[0] & { walletContext?: WalletContext | undefined }, moveId: string) {
  const levels = levelsOf(args);
  const transferId = manualTransferId(moveId);
  return { userId: ctx.identity.userId, transferId, ...(args.walletContext ? { walletContext: args.walletContext } : {}), ...(levels ? { levels } : {}) };
}

export const tradeMoneyTools = [
  moneyTool({
    name: 'wallet_buy',
    title: 'Buy a token with the wallet',
    description: `Buy a token with the wallet context's cash at the venue's price; a manual BUY lot opens (optional stop-loss / take-profit).${HOW}`,
    scopes: SCOPES,
    input: buyInput,
    preview: previewBuy,
    async execute(ctx, args, moveId) {
      return traded(ctx, await ctx.dispatch('ManualBuy', { ...manualTrade(ctx, args, moveId), mint: args.mint, amountMicro: usdToMicro(args.amountUsd) }));
    },
  }),
  moneyTool({
    name: 'wallet_sell',
    title: "Sell tokens of the wallet's manual lots",
    description:
      "Sell tokens of the user's own manual BUY lots (oldest first) at the venue's price; agent positions are never touched. " +
      'Selling the spend stablecoin (mint left out, or its mint) is a withdrawal of that many USD of the real wallet to destination, an address on chain.' +
      HOW,
    scopes: SCOPES,
    input: sellInput,
    preview: previewSell,
    async execute(ctx, args, moveId) {
      const { kind, mint } = sellMeaning(args.mint, ctx.deps.config.SPEND_STABLECOIN_MINT);
      if (kind === 'withdraw') {
        const destination = withdrawalDestination(args.destination);
        const data = { userId: ctx.identity.userId, transferId: manualTransferId(moveId), mint, amountMicro: usdToMicro(args.amount), destination };
        return traded(ctx, await ctx.dispatch('ManualWithdraw', { ...data, ...(args.walletContext ? { walletContext: args.walletContext } : {}) }));
      }
      return traded(ctx, await ctx.dispatch('ManualSell', { ...manualTrade(ctx, args, moveId), mint, units: Number(toUnits(args.amount, TOKEN_DECIMALS)) }));
    },
  }),
];
