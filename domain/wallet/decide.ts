import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { refuse } from '../shared/errors.ts';
import { microToUsd, type MicroUsd } from '../shared/money.ts';
import type { TransferPlan } from '../transfer/plan.ts';
import type { WalletContext, WalletEvent } from './events.ts';
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
export type RefundWallet = Command<'RefundWallet', { transferId: string }>;

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

export type WalletCommand = DebitWallet | RefundWallet | DepositWallet | CreditWallet | FreezeWallet | UnfreezeWallet;

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
  ensureNotFrozen(state);
  ensurePositive(transfer.amountMicro, 'the amount to transfer');
  ensureFunds(state, from.walletContext, transfer.amountMicro, virtualStartMicro);
  return [...opening(state, virtualStartMicro, metadata.now), { type: 'WalletDebited', data: { transfer: { ...transfer, from } } }];
}

function refund({ data }: RefundWallet, state: WalletState): WalletEvent[] {
  const paid = state.debits.get(data.transferId);
  if (!paid) throw refuse('TRANSFER_NOT_FOUND', `no transfer ${data.transferId} was paid by this wallet`);
  if (paid.refunded) return [];
  return [{ type: 'WalletRefunded', data: { transferId: data.transferId, walletContext: paid.walletContext, amountMicro: paid.amountMicro } }];
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
    default:
      return assertNever(command);
  }
}

export const walletDecider: Aggregate<WalletCommand, WalletState, WalletEvent> = { streamOf: walletStream, initialState, evolve, decide };
