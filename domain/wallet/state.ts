import { assertNever } from '../shared/decider.ts';
import type { MicroUsd } from '../shared/money.ts';
import { PersistentMap } from '../shared/persistent-map.ts';
import { endpointKey, type TransferPlan } from '../transfer/plan.ts';
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

/** A transfer this wallet received: a repeat must be the same credit. */
export interface WalletCredit {
  walletContext: WalletContext;
  amountMicro: MicroUsd;
  from: string;
}

/** A deposit into the real context: a repeat must carry the same amount. */
export interface WalletDeposit {
  amountMicro: MicroUsd;
}

/** A transfer destination as one string, to compare a retried debit with the recorded one. */
export const destinationOf = (to: TransferPlan['to']): string => endpointKey(to);

export interface WalletState {
  readonly opened: boolean;
  /** micro-USD per wallet context */
  readonly balances: Readonly<Record<WalletContext, MicroUsd>>;
  /** transfers debited, by transferId: a repeated debit moves nothing */
  readonly debits: PersistentMap<WalletTransfer>;
  /** transfers credited, by transferId: a repeated credit adds nothing */
  readonly credits: PersistentMap<WalletCredit>;
  /** deposits, by depositId: a repeated deposit adds nothing */
  readonly deposits: PersistentMap<WalletDeposit>;
  /** an administrator froze the wallet: it pays nothing out */
  readonly frozen: boolean;
  /** the freeze in force (its time and note); null when not frozen */
  readonly freeze: { at: string; reason?: string } | null;
}

type Fields = WalletState;

const stateOf = (fields: Fields): WalletState => fields;
const next = (state: WalletState, changes: Partial<Fields>): WalletState => stateOf({ ...fieldsOf(state), ...changes });
const fieldsOf = ({ opened, balances, debits, credits, deposits, frozen, freeze }: WalletState): Fields => ({
  opened,
  balances,
  debits,
  credits,
  deposits,
  frozen,
  freeze,
});

export const initialState = (): WalletState =>
  stateOf({
    opened: false,
    balances: { virtual: 0, real: 0 },
    debits: PersistentMap.empty(),
    credits: PersistentMap.empty(),
    deposits: PersistentMap.empty(),
    frozen: false,
    freeze: null,
  });

const add = (balances: WalletState['balances'], context: WalletContext, delta: MicroUsd) => ({ ...balances, [context]: balances[context] + delta });

export function evolve(state: WalletState, event: WalletEvent): WalletState {
  switch (event.type) {
    case 'WalletOpened':
      return next(state, { opened: true, balances: { virtual: event.data.virtualStartMicro, real: 0 } });
    case 'WalletDebited': {
      const { transferId, amountMicro, from, to } = event.data.transfer;
      return next(state, {
        balances: add(state.balances, from.walletContext, -amountMicro),
        debits: state.debits.set(transferId, { walletContext: from.walletContext, amountMicro, to: destinationOf(to), refunded: false }),
      });
    }
    case 'WalletRefunded': {
      const { transferId, walletContext, amountMicro } = event.data;
      const transfer = state.debits.get(transferId)!;
      return next(state, {
        balances: add(state.balances, walletContext, amountMicro),
        debits: state.debits.set(transferId, { ...transfer, refunded: true }),
      });
    }
    case 'WalletDeposited': {
      const { depositId, walletContext, amountMicro } = event.data;
      return next(state, { balances: add(state.balances, walletContext, amountMicro), deposits: state.deposits.set(depositId, { amountMicro }) });
    }
    case 'WalletCredited': {
      const { transferId, walletContext, amountMicro, from } = event.data;
      return next(state, {
        balances: add(state.balances, walletContext, amountMicro),
        credits: state.credits.set(transferId, { walletContext, amountMicro, from }),
      });
    }
    case 'WalletFrozen':
      return next(state, { frozen: true, freeze: event.data });
    case 'WalletUnfrozen':
      return next(state, { frozen: false, freeze: null });
    default:
      return assertNever(event);
  }
}

/**
 * The balance a command may spend. A wallet never used yet holds the virtual start it would open
 * with, so a percentage allocation on first use is computed from the same figure the debit uses.
 */
export function balanceOf(state: Pick<WalletState, 'opened' | 'balances'>, context: WalletContext, virtualStartMicro: MicroUsd): MicroUsd {
  if (state.opened) return state.balances[context];
  return context === 'virtual' ? virtualStartMicro : 0;
}
