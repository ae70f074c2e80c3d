// The manual trades' side of the wallet decider (domain/wallet/decide.ts keeps the one `decide`
// switch): a buy's lot opening, a sell's request, settlement or failure, a withdrawal's record.
import { canonicalJson } from '../shared/canonical-json.ts';
import type { Command } from '../shared/decider.ts';
import { invariant, InvariantViolation, refuse } from '../shared/errors.ts';
import type { MicroUsd } from '../shared/money.ts';
import { priceText, type Price } from '../shared/price.ts';
import type { TransferPlan } from '../transfer/plan.ts';
import type { WalletEvent } from './events.ts';
import { ensureNotFrozen, ensurePositive, ensureUnlocked } from './guards.ts';
import { averagePrice, levelPrices, openLotsOf, reduceOldestFirst, unitsHeld, unitsToTokens, type LevelPrices, type Lot, type LotLevels } from './lots.ts';
import type { WalletState } from './state.ts';

/** What a venue's swap did (infra/venues/port.ts `Swap`, once CONFIRMED). */
export interface SwapDone {
  txId: string;
  /** per whole token, exact */
  price: Price;
  units: number;
  usdMicro: MicroUsd;
}

/** A manual buy's swap is final: the lot opens (its id is the transfer's). A lot opened already opens nothing. */
export type OpenLot = Command<'OpenLot', { transferId: string; swap: SwapDone }>;

/**
 * A manual sell: checks and records the request (the trade lock) before any swap. A transferId
 * already requested records nothing.
 */
export type RequestSell = Command<'RequestSell', { transfer: TransferPlan }>;

/** A sell's swap is final: the lots shrink oldest first and the proceeds come in; once. */
export type SettleSell = Command<'SettleSell', { transferId: string; swap: SwapDone }>;

/** A withdrawal's chain transfer is final: recorded once (the debit paid it). */
export type RecordWithdrawal = Command<'RecordWithdrawal', { transferId: string; txId: string }>;

/** A sell's swap failed: the lots stay, the lock goes; once. */
export type FailSell = Command<'FailSell', { transferId: string; reason: string }>;

export function openLot({ data, metadata }: OpenLot, state: WalletState): WalletEvent[] {
  const { transferId, swap } = data;
  const buy = state.manual.get(transferId);
  if (buy?.side !== 'buy') throw refuse('TRANSFER_NOT_FOUND', `no manual buy ${transferId} was paid by this wallet`);
  if (buy.status === 'done') return [];
  if (buy.status === 'failed') throw refuse('ALREADY_EXISTS', `manual buy ${transferId} failed and was refunded: it opens no lot`);
  ensurePositive(swap.units, 'the tokens bought');
  // The swap is final: the lot opens whatever the levels resolve to at the price paid.
  const levels = levelPrices(buy.levels, averagePrice(swap.units, buy.requested), { swapped: true });
  return [
    {
      type: 'LotOpened',
      data: {
        transferId,
        walletContext: buy.walletContext,
        mint: buy.mint,
        costMicro: buy.requested,
        openedAt: metadata.now.toISOString(),
        ...swapFields(swap),
        ...levelTexts(levels),
      },
    },
  ];
}

export function requestSell({ data, metadata }: RequestSell, state: WalletState): WalletEvent[] {
  const { transfer } = data;
  const { from, to } = transfer;
  invariant(from.kind === 'lots' && from.units !== undefined, `transfer ${transfer.transferId} is not a sell of manual lots`);
  if (to.kind !== 'wallet' || to.userId !== from.userId || to.walletContext !== from.walletContext) {
    throw new InvariantViolation(`transfer ${transfer.transferId}: a sell pays the same wallet context`);
  }
  const known = state.manual.get(transfer.transferId);
  if (known) {
    const sameLevels = canonicalJson(known.levels ?? null) === canonicalJson(from.levels ?? null);
    if (known.side !== 'sell' || known.mint !== from.mint || known.requested !== from.units || known.walletContext !== from.walletContext || !sameLevels) {
      throw refuse('ALREADY_EXISTS', `transfer ${transfer.transferId} was requested as another buy or sell`);
    }
    return [];
  }
  if (state.debits.has(transfer.transferId)) throw refuse('ALREADY_EXISTS', `transfer ${transfer.transferId} was debited from this wallet: it is not a sell`);
  ensureNotFrozen(state);
  ensureUnlocked(state);
  const lots = openLotsOf(state.lots, from.walletContext, from.mint);
  const held = unitsHeld(lots);
  if (from.units > held) {
    throw refuse(
      'SELL_EXCEEDS_MANUAL_POSITION',
      `the sell (${unitsToTokens(from.units)}) exceeds the open manual BUY lots of ${from.mint} (${unitsToTokens(held)})`,
      {
        requestedAmount: unitsToTokens(from.units),
        manualPositionAmount: unitsToTokens(held),
      },
    );
  }
  if (from.levels && (lots.length !== 1 || lots[0]!.units === from.units)) {
    throw refuse(
      'LEVELS_NEED_ONE_LOT',
      lots.length !== 1
        ? `a stop-loss or take-profit needs exactly one open manual BUY of ${from.mint}; ${lots.length} are open`
        : 'a stop-loss or take-profit needs the lot to stay open: this sell closes it',
    );
  }
  // The levels on the lot left, checked now (INVALID_LEVELS) as SettleSell will resolve them: the
  // lock keeps the lots as they are until then, and once the swap is final nothing may be refused.
  if (from.levels) levelsOnLotLeft(lots, from.units, from.levels, {});
  return [{ type: 'SellRequested', data: { transfer: { ...transfer, from }, at: metadata.now.toISOString() } }];
}

export function settleSell({ data, metadata }: SettleSell, state: WalletState): WalletEvent[] {
  const { transferId, swap } = data;
  const sell = state.manual.get(transferId);
  if (sell?.side !== 'sell') throw refuse('TRANSFER_NOT_FOUND', `no manual sell ${transferId} was requested`);
  if (sell.status === 'done') return [];
  if (sell.status === 'failed') throw refuse('ALREADY_EXISTS', `manual sell ${transferId} failed: it sells nothing`);
  invariant(swap.units === sell.requested, `the swap sold ${swap.units} units, the sell asked for ${sell.requested}`);
  const lots = openLotsOf(state.lots, sell.walletContext, sell.mint);
  // The lock kept every other buy and sell out since the request: the lots still hold the units.
  const reductions = reduceOldestFirst(lots, sell.requested);
  const costMicro = reductions.reduce((sum, r) => sum + r.costMicro, 0);
  const levels = sell.levels ? levelsOnLotLeft(lots, sell.requested, sell.levels, { swapped: true }) : {};
  return [
    {
      type: 'LotsSold',
      data: {
        transferId,
        walletContext: sell.walletContext,
        mint: sell.mint,
        ...swapFields(swap),
        reductions,
        realizedPnlMicro: swap.usdMicro - costMicro,
        at: metadata.now.toISOString(),
        ...levelTexts(levels),
      },
    },
  ];
}

/** The levels a sell of `units` asks for, resolved on the lot it leaves (none when it leaves none). */
function levelsOnLotLeft(lots: readonly Lot[], units: number, levels: LotLevels, options: { swapped?: boolean }): LevelPrices {
  const last = reduceOldestFirst(lots, units).at(-1)!;
  const left = lots.find((l) => l.lotId === last.lotId && l.units > last.units);
  return left ? levelPrices(levels, averagePrice(left.units - last.units, left.costMicro - last.costMicro), options) : {};
}

/** A swap as an event holds it: the price as decimal text. */
const swapFields = ({ txId, price, units, usdMicro }: SwapDone) => ({ txId, price: priceText(price), units, usdMicro });

/** Levels as an event holds them: decimal text. */
const levelTexts = (levels: LevelPrices) => ({
  ...(levels.stopLoss !== undefined ? { stopLoss: priceText(levels.stopLoss) } : {}),
  ...(levels.takeProfit !== undefined ? { takeProfit: priceText(levels.takeProfit) } : {}),
});

export function failSell({ data, metadata }: FailSell, state: WalletState): WalletEvent[] {
  const sell = state.manual.get(data.transferId);
  if (sell?.side !== 'sell') throw refuse('TRANSFER_NOT_FOUND', `no manual sell ${data.transferId} was requested`);
  if (sell.status === 'failed') return [];
  if (sell.status === 'done') throw refuse('ALREADY_EXISTS', `manual sell ${data.transferId} is done: it cannot fail`);
  return [{ type: 'SellFailed', data: { transferId: data.transferId, reason: data.reason, at: metadata.now.toISOString() } }];
}

export function recordWithdrawal({ data, metadata }: RecordWithdrawal, state: WalletState): WalletEvent[] {
  const out = state.manual.get(data.transferId);
  if (out?.side !== 'withdraw') throw refuse('TRANSFER_NOT_FOUND', `no withdrawal ${data.transferId} was paid by this wallet`);
  if (out.status === 'done') return [];
  if (out.status === 'failed') throw refuse('ALREADY_EXISTS', `withdrawal ${data.transferId} failed and was refunded`);
  return [
    {
      type: 'WalletWithdrawn',
      data: {
        transferId: data.transferId,
        walletContext: 'real',
        amountMicro: out.requested,
        destination: out.destination!,
        txId: data.txId,
        at: metadata.now.toISOString(),
      },
    },
  ];
}
