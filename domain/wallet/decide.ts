import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { invariant, InvariantViolation, refuse } from '../shared/errors.ts';
import { microToUsd, type MicroUsd } from '../shared/money.ts';
import type { TransferPlan } from '../transfer/plan.ts';
import type { WalletContext, WalletEvent } from './events.ts';
import { ensureFunds, ensureNotFrozen, ensurePositive, ensureRoom, ensureUnlocked, opening } from './guards.ts';
import { openLotsOf } from './lots.ts';
import {
  failSell,
  openLot,
  recordWithdrawal,
  requestSell,
  settleSell,
  type FailSell,
  type OpenLot,
  type RecordWithdrawal,
  type RequestSell,
  type SettleSell,
} from './manual.ts';
import { destinationOf, evolve, initialState, walletStream, type WalletState } from './state.ts';

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

export type WalletCommand =
  | DebitWallet
  | RefundWallet
  | DepositWallet
  | CreditWallet
  | FreezeWallet
  | UnfreezeWallet
  | OpenLot
  | RequestSell
  | SettleSell
  | FailSell
  | RecordWithdrawal;

function debit({ data, metadata }: DebitWallet, state: WalletState): WalletEvent[] {
  const { transfer, virtualStartMicro } = data;
  const { from } = transfer;
  invariant(from.kind === 'wallet', `transfer ${transfer.transferId} is not paid by a wallet`);
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
  if (transfer.to.kind === 'address' && from.walletContext !== 'real')
    throw refuse('VALIDATION_FAILED', 'only the real wallet context can withdraw to an address');
  if (transfer.to.kind === 'lots' || transfer.to.kind === 'address') {
    if (transfer.to.userId !== from.userId || transfer.to.walletContext !== from.walletContext) {
      throw new InvariantViolation(`transfer ${transfer.transferId}: a buy or withdrawal stays in the paying user's wallet context`);
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
  return [
    ...opening(state, data.virtualStartMicro, metadata.now),
    { type: 'WalletFrozen', data: { ...(data.reason === undefined ? {} : { reason: data.reason }), at } },
  ];
}

function unfreeze({ metadata }: UnfreezeWallet, state: WalletState): WalletEvent[] {
  return state.frozen ? [{ type: 'WalletUnfrozen', data: { at: metadata.now.toISOString() } }] : [];
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
