import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { refuse } from '../shared/errors.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import { microToUsd, type MicroUsd } from '../shared/money.ts';
import type { TransferPlan } from '../transfer/plan.ts';
import type { WalletContext, WalletEvent } from './events.ts';
import { averagePriceMicro, levelPrices, openLotsOf, reduceOldestFirst, unitsHeld, unitsToTokens, type LevelPrices, type Lot, type LotLevels } from './lots.ts';
import { balanceOf, destinationOf, evolve, initialState, walletStream, type WalletState } from './state.ts';

/** Pay a transfer out of the wallet context `transfer.from`; a transferId already paid pays nothing. */
export type DebitWallet = Command<
  'DebitWallet',
  {
    transfer: TransferPlan;
    /** config.VIRTUAL_START_USD in micro-USD: used only when this is the wallet's first use */
    virtualStartMicro: MicroUsd;
  }
>;

/** Give back a transfer this wallet paid (its destination rejected it); once. */
export type RefundWallet = Command<'RefundWallet', { transferId: string; reason?: string }>;

/**
 * Credit the real context as a confirmed on-chain deposit would (on the simulated venue, an
 * administrator's deposit); a depositId already credited credits nothing.
 */
export type DepositWallet = Command<
  'DepositWallet',
  {
    depositId: string;
    amountMicro: MicroUsd;
    /** config.VIRTUAL_START_USD in micro-USD: used only when this is the wallet's first use */
    virtualStartMicro: MicroUsd;
  }
>;

/** The destination step of a transfer coming back to the wallet; a transferId already credited credits nothing. */
export type CreditWallet = Command<
  'CreditWallet',
  {
    transferId: string;
    walletContext: WalletContext;
    amountMicro: MicroUsd;
    /** the source, e.g. `pool:<poolId>` */
    from: string;
    /** config.VIRTUAL_START_USD in micro-USD: used only when this is the wallet's first use */
    virtualStartMicro: MicroUsd;
  }
>;

/**
 * An administrator (the command's actor) freezes the wallet: it pays nothing out until unfrozen.
 * A wallet never used opens with the freeze; a frozen wallet records nothing again.
 */
export type FreezeWallet = Command<
  'FreezeWallet',
  {
    reason?: string;
    /** config.VIRTUAL_START_USD in micro-USD: used only when this is the wallet's first use */
    virtualStartMicro: MicroUsd;
  }
>;

/** An administrator unfreezes the wallet; a wallet not frozen records nothing. */
export type UnfreezeWallet = Command<'UnfreezeWallet', Record<string, never>>;

/** What a venue's swap did (infra/venues/port.ts `Swap`, once CONFIRMED). */
export interface SwapDone {
  txId: string;
  priceMicro: MicroUsd;
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

export type WalletCommand = DebitWallet | RefundWallet | DepositWallet | CreditWallet | FreezeWallet | UnfreezeWallet | OpenLot | RequestSell | SettleSell | FailSell | RecordWithdrawal;

function debit({ data, metadata }: DebitWallet, state: WalletState): WalletEvent[] {
  const { transfer, virtualStartMicro } = data;
  const { from } = transfer;
  if (from.kind !== 'wallet') throw refuse('VALIDATION_FAILED', `transfer ${transfer.transferId} is not paid by a wallet`);
  const known = state.debits.get(transfer.transferId);
  if (known) {
    // A retry of the same transfer moves nothing; the same id for another destination would credit
    // a pool the money never left for.
    if (known.to !== destinationOf(transfer.to)) throw refuse('ALREADY_EXISTS', `transfer ${transfer.transferId} was debited for another destination`);
    return [];
  }
  // A manual sell's id is that sell's: a debit under it would record a second trade (and a second
  // swap at the venue) under one id.
  if (state.manual.has(transfer.transferId)) throw refuse('ALREADY_EXISTS', `transfer ${transfer.transferId} was requested as a manual sell`);
  ensureNotFrozen(state);
  if (transfer.to.kind === 'address' && from.walletContext !== 'real') throw refuse('VALIDATION_FAILED', 'only the real wallet context can withdraw to an address');
  if (transfer.to.kind === 'lots' || transfer.to.kind === 'address') {
    if (transfer.to.userId !== from.userId || transfer.to.walletContext !== from.walletContext) {
      throw refuse('VALIDATION_FAILED', `transfer ${transfer.transferId}: a buy or withdrawal stays in the paying user's wallet context`);
    }
    ensureUnlocked(state);
  }
  if (transfer.to.kind === 'lots') {
    // A stop or target belongs to the one lot of its mint: a buy sets them only on the first.
    if (transfer.to.levels && openLotsOf(state.lots, transfer.to.walletContext, transfer.to.mint).length > 0) {
      throw refuse('LEVELS_NEED_ONE_LOT', `a stop-loss or take-profit needs exactly one open manual BUY of ${transfer.to.mint}: one is open already`);
    }
  }
  ensurePositive(transfer.amountMicro, 'the amount to transfer');
  ensureFunds(state, from.walletContext, transfer.amountMicro, virtualStartMicro);
  return [...opening(state, virtualStartMicro, metadata.now), { type: 'WalletDebited', data: { transfer: { ...transfer, from } } }];
}

function refund({ data }: RefundWallet, state: WalletState): WalletEvent[] {
  const paid = state.debits.get(data.transferId);
  if (!paid) throw refuse('TRANSFER_NOT_FOUND', `no transfer ${data.transferId} was paid by this wallet`);
  if (paid.refunded) return [];
  if (state.manual.get(data.transferId)?.status === 'done') throw refuse('ALREADY_EXISTS', `transfer ${data.transferId} opened its lot: it cannot be refunded`);
  const { transferId, reason } = data;
  return [{ type: 'WalletRefunded', data: { transferId, walletContext: paid.walletContext, amountMicro: paid.amountMicro, ...(reason ? { reason } : {}) } }];
}

function openLot({ data, metadata }: OpenLot, state: WalletState): WalletEvent[] {
  const { transferId, swap } = data;
  const buy = state.manual.get(transferId);
  if (!buy || buy.side !== 'buy') throw refuse('TRANSFER_NOT_FOUND', `no manual buy ${transferId} was paid by this wallet`);
  if (buy.status === 'done') return [];
  if (buy.status === 'failed') throw refuse('ALREADY_EXISTS', `manual buy ${transferId} failed and was refunded: it opens no lot`);
  ensurePositive(swap.units, 'the tokens bought');
  // The swap is final: the lot opens whatever the levels resolve to at the price paid.
  const levels = levelPrices(buy.levels, averagePriceMicro(swap.units, buy.requested), { swapped: true });
  return [
    {
      type: 'LotOpened',
      data: { transferId, walletContext: buy.walletContext, mint: buy.mint, costMicro: buy.requested, openedAt: metadata.now.toISOString(), ...swap, ...levels },
    },
  ];
}

function requestSell({ data, metadata }: RequestSell, state: WalletState): WalletEvent[] {
  const { transfer } = data;
  const { from, to } = transfer;
  if (from.kind !== 'lots' || from.units === undefined) throw refuse('VALIDATION_FAILED', `transfer ${transfer.transferId} is not a sell of manual lots`);
  if (to.kind !== 'wallet' || to.userId !== from.userId || to.walletContext !== from.walletContext) {
    throw refuse('VALIDATION_FAILED', `transfer ${transfer.transferId}: a sell pays the same wallet context`);
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
    throw refuse('SELL_EXCEEDS_MANUAL_POSITION', `the sell (${unitsToTokens(from.units)}) exceeds the open manual BUY lots of ${from.mint} (${unitsToTokens(held)})`, {
      requestedAmount: unitsToTokens(from.units),
      manualPositionAmount: unitsToTokens(held),
    });
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

function settleSell({ data, metadata }: SettleSell, state: WalletState): WalletEvent[] {
  const { transferId, swap } = data;
  const sell = state.manual.get(transferId);
  if (!sell || sell.side !== 'sell') throw refuse('TRANSFER_NOT_FOUND', `no manual sell ${transferId} was requested`);
  if (sell.status === 'done') return [];
  if (sell.status === 'failed') throw refuse('ALREADY_EXISTS', `manual sell ${transferId} failed: it sells nothing`);
  if (swap.units !== sell.requested) throw refuse('VALIDATION_FAILED', `the swap sold ${swap.units} units, the sell asked for ${sell.requested}`);
  const lots = openLotsOf(state.lots, sell.walletContext, sell.mint);
  // The lock kept every other buy and sell out since the request: the lots still hold the units.
  const reductions = reduceOldestFirst(lots, sell.requested);
  const costMicro = reductions.reduce((sum, r) => sum + r.costMicro, 0);
  const levels = sell.levels ? levelsOnLotLeft(lots, sell.requested, sell.levels, { swapped: true }) : {};
  return [
    {
      type: 'LotsSold',
      data: { transferId, walletContext: sell.walletContext, mint: sell.mint, ...swap, reductions, realizedPnlMicro: swap.usdMicro - costMicro, at: metadata.now.toISOString(), ...levels },
    },
  ];
}

/** The levels a sell of `units` asks for, resolved on the lot it leaves (none when it leaves none). */
function levelsOnLotLeft(lots: readonly Lot[], units: number, levels: LotLevels, options: { swapped?: boolean }): LevelPrices {
  const last = reduceOldestFirst(lots, units).at(-1)!;
  const left = lots.find((l) => l.lotId === last.lotId && l.units > last.units);
  return left ? levelPrices(levels, averagePriceMicro(left.units - last.units, left.costMicro - last.costMicro), options) : {};
}

function failSell({ data, metadata }: FailSell, state: WalletState): WalletEvent[] {
  const sell = state.manual.get(data.transferId);
  if (!sell || sell.side !== 'sell') throw refuse('TRANSFER_NOT_FOUND', `no manual sell ${data.transferId} was requested`);
  if (sell.status === 'failed') return [];
  if (sell.status === 'done') throw refuse('ALREADY_EXISTS', `manual sell ${data.transferId} is done: it cannot fail`);
  return [{ type: 'SellFailed', data: { transferId: data.transferId, reason: data.reason, at: metadata.now.toISOString() } }];
}

function recordWithdrawal({ data, metadata }: RecordWithdrawal, state: WalletState): WalletEvent[] {
  const out = state.manual.get(data.transferId);
  if (!out || out.side !== 'withdraw') throw refuse('TRANSFER_NOT_FOUND', `no withdrawal ${data.transferId} was paid by this wallet`);
  if (out.status === 'done') return [];
  if (out.status === 'failed') throw refuse('ALREADY_EXISTS', `withdrawal ${data.transferId} failed and was refunded`);
  return [
    {
      type: 'WalletWithdrawn',
      data: { transferId: data.transferId, walletContext: 'real', amountMicro: out.requested, destination: out.destination!, txId: data.txId, at: metadata.now.toISOString() },
    },
  ];
}

/** TRADE_IN_PROGRESS (409) while another manual buy or sell of this wallet runs. */
function ensureUnlocked(state: WalletState): void {
  if (state.lock !== null) throw refuse('TRADE_IN_PROGRESS', 'another buy or sell of this wallet is running: retry once it ends', { transferId: state.lock });
}

function deposit({ data, metadata }: DepositWallet, state: WalletState): WalletEvent[] {
  const { depositId, amountMicro, virtualStartMicro } = data;
  const known = state.deposits.get(depositId);
  if (known) {
    // A retried deposit adds nothing; the same id for another amount is another deposit under a taken id.
    if (known.amountMicro !== amountMicro) {
      throw refuse('ALREADY_EXISTS', `deposit ${depositId} was recorded with another amount (${microToUsd(known.amountMicro)} USD)`);
    }
    return [];
  }
  ensurePositive(amountMicro, 'the amount to deposit');
  ensureRoom(state, 'real', amountMicro, virtualStartMicro);
  return [
    ...opening(state, virtualStartMicro, metadata.now),
    { type: 'WalletDeposited', data: { depositId, walletContext: 'real', amountMicro, at: metadata.now.toISOString() } },
  ];
}

function credit({ data, metadata }: CreditWallet, state: WalletState): WalletEvent[] {
  const { transferId, walletContext, amountMicro, from, virtualStartMicro } = data;
  const known = state.credits.get(transferId);
  if (known) {
    if (known.walletContext !== walletContext || known.amountMicro !== amountMicro || known.from !== from) {
      throw refuse('ALREADY_EXISTS', `transfer ${transferId} was credited with another amount, context or source`);
    }
    return [];
  }
  ensurePositive(amountMicro, 'the amount to credit');
  ensureRoom(state, walletContext, amountMicro, virtualStartMicro);
  return [...opening(state, virtualStartMicro, metadata.now), { type: 'WalletCredited', data: { transferId, walletContext, amountMicro, from } }];
}

function freeze({ data, metadata }: FreezeWallet, state: WalletState): WalletEvent[] {
  if (state.frozen) return [];
  const at = metadata.now.toISOString();
  return [...opening(state, data.virtualStartMicro, metadata.now), { type: 'WalletFrozen', data: { ...(data.reason === undefined ? {} : { reason: data.reason }), at } }];
}

function unfreeze({ metadata }: UnfreezeWallet, state: WalletState): WalletEvent[] {
  return state.frozen ? [{ type: 'WalletUnfrozen', data: { at: metadata.now.toISOString() } }] : [];
}

/**
 * WALLET_FROZEN (403) when an administrator froze the wallet: only money leaving it is refused;
 * deposits, credits and refunds coming back are taken, so money can always come home.
 */
export function ensureNotFrozen(state: Pick<WalletState, 'frozen'>): void {
  if (state.frozen) throw refuse('WALLET_FROZEN', 'an administrator froze this wallet: nothing can be paid out of it');
}

/** The wallet's first event, when this decision is its first use. */
function opening(state: WalletState, virtualStartMicro: MicroUsd, now: Date): WalletEvent[] {
  return state.opened ? [] : [{ type: 'WalletOpened', data: { virtualStartMicro, openedAt: now.toISOString() } }];
}

function ensurePositive(amountMicro: MicroUsd, what: string): void {
  if (!Number.isSafeInteger(amountMicro) || amountMicro <= 0) throw refuse('VALIDATION_FAILED', `${what} must be positive`);
}

/** Balances stay exact integers: a credit that would take one past 2^53 − 1 micro-USD is refused. */
function ensureRoom(state: WalletState, context: WalletContext, amountMicro: MicroUsd, virtualStartMicro: MicroUsd): void {
  if (balanceOf(state, context, virtualStartMicro) + amountMicro > Number.MAX_SAFE_INTEGER) {
    throw refuse('VALIDATION_FAILED', `the ${context} balance would exceed ${microToUsd(Number.MAX_SAFE_INTEGER)} USD`);
  }
}

/** Refuses (INSUFFICIENT_FUNDS, naming the available balance) when the context cannot pay `amountMicro`. */
export function ensureFunds(state: Pick<WalletState, 'opened' | 'balances'>, context: WalletContext, amountMicro: MicroUsd, virtualStartMicro: MicroUsd): void {
  const available = balanceOf(state, context, virtualStartMicro);
  if (amountMicro <= available) return;
  const details = { availableUsd: microToUsd(available), requestedUsd: microToUsd(amountMicro) };
  if (context === 'real' && available === 0) {
    throw refuse('INSUFFICIENT_FUNDS', 'the real wallet has no funds: deposit to the real wallet before following in the real context', details);
  }
  throw refuse(
    'INSUFFICIENT_FUNDS',
    `insufficient ${context} wallet funds: ${microToUsd(available)} USD available, ${microToUsd(amountMicro)} USD requested`,
    details,
  );
}

export function decide(command: WalletCommand, state: WalletState): WalletEvent[] {
  switch (command.type) {
    case 'DebitWallet':
      return debit(command, state);
    case 'RefundWallet':
      return refund(command, state);
    case 'DepositWallet':
      return deposit(command, state);
    case 'CreditWallet':
      return credit(command, state);
    case 'FreezeWallet':
      return freeze(command, state);
    case 'UnfreezeWallet':
      return unfreeze(command, state);
    case 'OpenLot':
      return openLot(command, state);
    case 'RequestSell':
      return requestSell(command, state);
    case 'SettleSell':
      return settleSell(command, state);
    case 'FailSell':
      return failSell(command, state);
    case 'RecordWithdrawal':
      return recordWithdrawal(command, state);
    default:
      return assertNever(command);
  }
}

export const walletDecider: Aggregate<WalletCommand, WalletState, WalletEvent> = { streamOf: walletStream, initialState, evolve, decide };
