// A user's manual buy (wallet context → a lot of a mint) and sell (lots → wallet context): each is a
// transfer of the one transfer process, its id stable (derived from the Idempotency-Key when the
// request has one), so a repeat of the same request runs the same transfer and finds what it did.
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import type { TransferPlan } from '../../domain/transfer/plan.ts';
import { planned, type TransferState } from '../../domain/transfer/process.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import type { WalletContext } from '../../domain/wallet/context.ts';
import { crossedLevel, exitTransferId, nextExit } from '../../domain/wallet/exits.ts';
import { ensureWithdrawable } from '../../domain/wallet/sell.ts';
import { ensureLevelsAgainstMark } from '../../domain/wallet/lots.ts';
import type { Tools } from '../tools.ts';
import { markPriceOf, SWAP_PRICE } from '../market/mark-price.ts';
import { currentWalletContext, PLAN_STALENESS_MS } from '../subscriptions/planning.ts';
import { runTransfer } from '../transfers/run.ts';
import type { Price } from '../../domain/shared/price.ts';
import type { ManualTradeData, ManualBuyData, ManualSellData, ManualTradeResult, ManualWithdrawData, ExitLotData, ExitLotResult } from './commands.ts';

async function contextOf(tools: Tools, data: ManualTradeData): Promise<WalletContext> {
  return data.walletContext ?? currentWalletContext(tools, data.userId, { maxStaleMs: PLAN_STALENESS_MS });
}

/**
 * Levels that would trigger at once are refused before anything moves; a repeat of a trade the
 * wallet recorded finds what it did, whatever the mark now (as a buy's missing mark: `buyMark`).
 */
async function checkLevels(tools: Tools, data: ManualTradeData, mark: Price | null): Promise<void> {
  if (!data.levels || mark === null) return;
  try {
    ensureLevelsAgainstMark(data.levels, mark);
  } catch (err) {
    const { state } = await tools.load(walletDecider, data.userId);
    if (!state.manual.has(data.transferId)) throw err;
  }
}

/** A refusal answers as such; a buy whose swap failed (refunded) answers SWAP_FAILED; else the wallet's record. */
async function answer(tools: Tools, userId: string, transfer: TransferState): Promise<ManualTradeResult> {
  if (transfer.status === 'failed') throw transfer.refusal!;
  const { state } = await tools.load(walletDecider, userId, { answer: true });
  const record = state.manual.get(transfer.plan.transferId)!;
  if (transfer.status === 'compensated' || record.status === 'failed') {
    const reason = record.reason ?? transfer.rejection ?? 'SWAP_FAILED';
    throw refuse('SWAP_FAILED', `the venue failed the ${record.side}: ${reason}; nothing moved`, { swapReason: reason });
  }
  return { ...record, transferId: transfer.plan.transferId };
}

/**
 * The price a buy swaps at. A new buy of a mint the venue has no price for is refused before
 * anything moves (the swap would fail, the debit come back); a repeat of a buy already debited finds
 * what it did, whatever the price now (null).
 */
async function buyMark(tools: Tools, data: ManualBuyData): Promise<Price | null> {
  const mark = await markPriceOf(tools, data.mint, SWAP_PRICE);
  if (mark !== null) return mark;
  const { state } = await tools.load(walletDecider, data.userId);
  if (state.manual.has(data.transferId)) return null;
  throw refuse('NO_MARK_PRICE', `the venue has no price for ${data.mint}: it cannot be bought until one is set`);
}

/** POST /api/v1/wallet/buy: the wallet context pays, the venue swaps, the lot opens. */
export async function manualBuy({ data }: Command<'ManualBuy', ManualBuyData>, tools: Tools): Promise<ManualTradeResult> {
  const walletContext = await contextOf(tools, data);
  await checkLevels(tools, data, await buyMark(tools, data));
  const plan: TransferPlan = {
    transferId: data.transferId,
    amountMicro: data.amountMicro,
    from: { kind: 'wallet', userId: data.userId, walletContext },
    to: { kind: 'lots', userId: data.userId, walletContext, mint: data.mint, ...(data.levels ? { levels: data.levels } : {}) },
  };
  return answer(tools, data.userId, await runTransfer(tools, planned(plan)));
}

/** POST /api/v1/wallet/sell: refused before any swap when the lots hold less; the lots shrink once the swap is final. */
export async function manualSell({ data }: Command<'ManualSell', ManualSellData>, tools: Tools): Promise<ManualTradeResult> {
  const walletContext = await contextOf(tools, data);
  await checkLevels(tools, data, data.levels ? await markPriceOf(tools, data.mint) : null);
  const plan: TransferPlan = {
    transferId: data.transferId,
    amountMicro: 0, // what the swap fetches: the venue decides
    from: { kind: 'lots', userId: data.userId, walletContext, mint: data.mint, units: data.units, ...(data.levels ? { levels: data.levels } : {}) },
    to: { kind: 'wallet', userId: data.userId, walletContext },
  };
  return answer(tools, data.userId, await runTransfer(tools, planned(plan)));
}

/** POST /api/v1/wallet/sell of the spend stablecoin: the real context's cash goes to `destination` on chain. */
export async function manualWithdraw({ data }: Command<'ManualWithdraw', ManualWithdrawData>, tools: Tools): Promise<ManualTradeResult> {
  const { userId, transferId, mint, amountMicro, destination } = data;
  const walletContext = data.walletContext ?? (await currentWalletContext(tools, userId, { maxStaleMs: PLAN_STALENESS_MS }));
  ensureWithdrawable(walletContext);
  const plan: TransferPlan = {
    transferId,
    amountMicro,
    from: { kind: 'wallet', userId, walletContext: 'real' },
    to: { kind: 'address', userId, walletContext: 'real', mint, destination },
  };
  return answer(tools, userId, await runTransfer(tools, planned(plan)));
}

/**
 * The price watcher's sell of a lot whose stop-loss or take-profit the mark crossed: the whole lot,
 * through the same sell path, once (the transfer id is the lot's; a try whose swap failed is
 * followed by a new one after a growing wait: domain/wallet/exits.ts). A lot with levels is the oldest of its mint (levels need it to be the
 * only one when set), so selling its units takes exactly it.
 */
export async function exitLot({ data }: Command<'ExitLot', ExitLotData>, tools: Tools): Promise<ExitLotResult> {
  const { state } = await tools.load(walletDecider, data.userId);
  const lot = state.lots.find((l) => l.lotId === data.lotId);
  if (!lot) return { sold: false, why: 'no-lot' };
  const trigger = crossedLevel(lot, data.price);
  if (!trigger) return { sold: false, why: 'not-crossed' };
  const next = nextExit(state.manual, lot.lotId, tools.metadata.now);
  if ('retryAt' in next) return { sold: false, why: 'retry-later', retryAt: next.retryAt.toISOString() };
  const transferId = exitTransferId(lot.lotId, next.attempt);
  const trade = await manualSell(
    {
      type: 'ManualSell',
      data: { userId: data.userId, transferId, mint: lot.mint, units: lot.units, walletContext: lot.walletContext },
      metadata: tools.metadata,
    },
    tools,
  );
  return { sold: true, trigger, trade };
}
