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

export type WalletCommand = DebitWallet | RefundWallet;

function debit({ data, metadata }: DebitWallet, state: WalletState): WalletEvent[] {
  const { transfer, virtualStartMicro } = data;
  const known = state.transfers[transfer.transferId];
  if (known) {
    // A retry of the same transfer moves nothing; the same id for another destination would credit
    // a pool the money never left for.
    if (known.to !== destinationOf(transfer.to)) throw refuse('ALREADY_EXISTS', `transfer ${transfer.transferId} was debited for another destination`);
    return [];
  }
  if (!Number.isSafeInteger(transfer.amountMicro) || transfer.amountMicro <= 0) {
    throw refuse('VALIDATION_FAILED', 'the amount to transfer must be positive');
  }
  const events: WalletEvent[] = [];
  if (!state.opened) events.push({ type: 'WalletOpened', data: { virtualStartMicro, openedAt: metadata.now.toISOString() } });
  ensureFunds(state, transfer.from.walletContext, transfer.amountMicro, virtualStartMicro);
  events.push({ type: 'WalletDebited', data: { transfer } });
  return events;
}

function refund({ data }: RefundWallet, state: WalletState): WalletEvent[] {
  const paid = state.transfers[data.transferId];
  if (!paid) throw refuse('TRANSFER_NOT_FOUND', `no transfer ${data.transferId} was paid by this wallet`);
  if (paid.refunded) return [];
  return [{ type: 'WalletRefunded', data: { transferId: data.transferId, walletContext: paid.walletContext, amountMicro: paid.amountMicro } }];
}

/** Refuses (INSUFFICIENT_FUNDS, naming the available balance) when the context cannot pay `amountMicro`. */
export function ensureFunds(state: WalletState, context: WalletContext, amountMicro: MicroUsd, virtualStartMicro: MicroUsd): void {
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
    default:
      return assertNever(command);
  }
}

export const walletDecider: Aggregate<WalletCommand, WalletState, WalletEvent> = { streamOf: walletStream, initialState, evolve, decide };
