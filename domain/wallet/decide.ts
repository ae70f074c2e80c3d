import type { FollowOpening } from '../pool/events.ts';
import { assertNever } from '../shared/decider.ts';
import { badRequest } from '../shared/errors.ts';
import { microToUsd, type MicroUsd } from '../shared/money.ts';
import type { WalletContext, WalletEvent } from './events.ts';
import { balanceOf, type WalletState } from './state.ts';

export interface AllocateFunds {
  type: 'AllocateFunds';
  data: {
    transferId: string;
    poolId: string;
    walletContext: WalletContext;
    amountMicro: MicroUsd;
    /** config.VIRTUAL_START_USD in micro-USD: used only when this is the wallet's first use */
    virtualStartMicro: MicroUsd;
    /** the pool's opening when this debit pays for its first follow (kept in the event for recovery) */
    follow?: FollowOpening;
    now: Date;
  };
}

export type WalletCommand = AllocateFunds;

function allocateFunds(command: AllocateFunds['data'], state: WalletState): WalletEvent[] {
  const { transferId, poolId, walletContext, amountMicro, virtualStartMicro, follow, now } = command;
  // A transfer already made is not made again: the caller retries its second step with the same id.
  if (Object.hasOwn(state.transfers, transferId)) return [];
  if (!Number.isSafeInteger(amountMicro) || amountMicro <= 0) throw badRequest('the amount to allocate must be positive');
  const events: WalletEvent[] = [];
  if (!state.opened) {
    events.push({ type: 'WalletOpened', data: { virtualStartMicro, openedAt: now.toISOString() } });
  }
  ensureFunds(state, walletContext, amountMicro, virtualStartMicro);
  events.push({ type: 'VirtualFundsAllocated', data: { transferId, poolId, walletContext, amountMicro, ...(follow ? { follow } : {}) } });
  return events;
}

/** Throws 400 naming the available balance when the context cannot pay `amountMicro`. */
export function ensureFunds(state: WalletState, context: WalletContext, amountMicro: MicroUsd, virtualStartMicro: MicroUsd): void {
  const available = balanceOf(state, context, virtualStartMicro);
  if (amountMicro > available) throw insufficientFunds(context, available, amountMicro);
}

function insufficientFunds(context: WalletContext, available: MicroUsd, needed: MicroUsd) {
  const details = { availableUsd: microToUsd(available), requestedUsd: microToUsd(needed) };
  if (context === 'real' && available === 0) {
    return badRequest('the real wallet has no funds: deposit to the real wallet before following in the real context', details);
  }
  return badRequest(
    `insufficient ${context} wallet funds: ${microToUsd(available)} USD available, ${microToUsd(needed)} USD requested`,
    details,
  );
}

export function decide(command: WalletCommand, state: WalletState): WalletEvent[] {
  switch (command.type) {
    case 'AllocateFunds':
      return allocateFunds(command.data, state);
    default:
      return assertNever(command.type);
  }
}
