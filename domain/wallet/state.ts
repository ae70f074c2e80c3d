import { assertNever } from '../shared/decider.ts';
import type { MicroUsd } from '../shared/money.ts';
import type { TransferPlan } from '../transfer/plan.ts';
import type { WalletContext, WalletEvent } from './events.ts';

export const walletStream = (userId: string): string => `wallet-${userId}`;

/** A transfer this wallet paid: the amount it recorded, and whether it was given back. */
export interface WalletTransfer {
  walletContext: WalletContext;
  amountMicro: MicroUsd;
  /** the destination the debit was made for (a retry must name the same one) */
  to: string;
  refunded: boolean;
}

/** A transfer destination as one string, to compare a retried debit with the recorded one. */
export const destinationOf = (to: TransferPlan['to']): string => `${to.kind}:${to.userId}.${to.agentId}.${to.walletContext}`;

export interface WalletState {
  opened: boolean;
  /** micro-USD per wallet context */
  balances: Readonly<Record<WalletContext, MicroUsd>>;
  /** transfers debited, by transferId: a repeated debit moves nothing */
  transfers: Readonly<Record<string, WalletTransfer>>;
}

export const initialState = (): WalletState => ({ opened: false, balances: { virtual: 0, real: 0 }, transfers: {} });

const add = (balances: WalletState['balances'], context: WalletContext, delta: MicroUsd) => ({ ...balances, [context]: balances[context] + delta });

export function evolve(state: WalletState, event: WalletEvent): WalletState {
  switch (event.type) {
    case 'WalletOpened':
      return { ...state, opened: true, balances: { virtual: event.data.virtualStartMicro, real: 0 } };
    case 'WalletDebited': {
      const { transferId, amountMicro, from, to } = event.data.transfer;
      return {
        ...state,
        balances: add(state.balances, from.walletContext, -amountMicro),
        transfers: { ...state.transfers, [transferId]: { walletContext: from.walletContext, amountMicro, to: destinationOf(to), refunded: false } },
      };
    }
    case 'WalletRefunded': {
      const { transferId, walletContext, amountMicro } = event.data;
      const transfer = state.transfers[transferId]!;
      return {
        ...state,
        balances: add(state.balances, walletContext, amountMicro),
        transfers: { ...state.transfers, [transferId]: { ...transfer, refunded: true } },
      };
    }
    default:
      return assertNever(event);
  }
}


/**
 * The balance a command may spend. A wallet never used yet holds the virtual start it would open
 * with, so a percentage allocation on first use is computed from the same figure the debit uses.
 */
export function balanceOf(state: WalletState, context: WalletContext, virtualStartMicro: MicroUsd): MicroUsd {
  if (state.opened) return state.balances[context];
  return context === 'virtual' ? virtualStartMicro : 0;
}
