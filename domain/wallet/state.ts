import { assertNever } from '../shared/decider.ts';
import type { MicroUsd } from '../shared/money.ts';
import type { WalletContext, WalletEvent } from './events.ts';

export const walletStream = (userId: string): string => `wallet-${userId}`;

export interface WalletState {
  opened: boolean;
  /** micro-USD per wallet context */
  balances: Readonly<Record<WalletContext, MicroUsd>>;
  /** transfers already made, by transferId: their amount (the pool credits exactly this) */
  transfers: Readonly<Record<string, MicroUsd>>;
}

export const initialState = (): WalletState => ({ opened: false, balances: { virtual: 0, real: 0 }, transfers: {} });

export function evolve(state: WalletState, event: WalletEvent): WalletState {
  switch (event.type) {
    case 'WalletOpened':
      return { ...state, opened: true, balances: { virtual: event.data.virtualStartMicro, real: 0 } };
    case 'VirtualFundsAllocated': {
      const { walletContext, amountMicro, transferId } = event.data;
      return {
        ...state,
        balances: { ...state.balances, [walletContext]: state.balances[walletContext] - amountMicro },
        transfers: { ...state.transfers, [transferId]: amountMicro },
      };
    }
    default:
      return assertNever(event);
  }
}

export const walletFolder = { initialState, evolve };

/**
 * The balance a command may spend. A wallet never used yet holds the virtual start it would open
 * with, so a percentage allocation on first use is computed from the same figure the debit uses.
 */
export function balanceOf(state: WalletState, context: WalletContext, virtualStartMicro: MicroUsd): MicroUsd {
  if (state.opened) return state.balances[context];
  return context === 'virtual' ? virtualStartMicro : 0;
}
