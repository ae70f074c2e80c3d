import { assertNever } from '../shared/decider.ts';
import type { MicroUsd } from '../shared/money.ts';
import { PersistentMap } from '../shared/persistent-map.ts';
import { endpointKey, type TransferPlan } from '../transfer/plan.ts';
import type { WalletContext, WalletEvent } from './events.ts';
import { storedPrice, type Price } from '../shared/price.ts';
import { applyReductions, levelFromText, type Lot, type LotLevels } from './lots.ts';
import { upcastWalletEvent } from './upcast.ts';

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

/** A manual buy or sell, by its transfer id: what it asked for and, once it ended, what it did. */
export interface ManualTrade {
  /** a withdrawal is a sell of the spend stablecoin: its mint is the stablecoin's */
  side: 'buy' | 'sell' | 'withdraw';
  walletContext: WalletContext;
  mint: string;
  status: 'requested' | 'done' | 'failed';
  /** a buy: the micro-USD it pays; a sell: the token units it sells */
  requested: number;
  /** the stop-loss / take-profit asked for */
  levels?: LotLevels;
  /** the venue's swap, once done */
  swap?: { txId: string; price: Price; units: number; usdMicro: MicroUsd };
  /** a sell's realized PnL, once done */
  realizedPnlMicro?: MicroUsd;
  /** when it ended */
  endedAt?: string;
  /** why it failed */
  reason?: string;
  /** a withdrawal's address */
  destination?: string;
}

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
  /** open manual BUY lots, oldest first */
  readonly lots: readonly Lot[];
  /** manual buys and sells by transfer id: a repeat finds the first */
  readonly manual: PersistentMap<ManualTrade>;
  /** the trade-in-progress lock: the manual buy or sell running, from its request to its end */
  readonly lock: string | null;
}

type Fields = WalletState;

const stateOf = (fields: Fields): WalletState => fields;
const next = (state: WalletState, changes: Partial<Fields>): WalletState => stateOf({ ...fieldsOf(state), ...changes });
const fieldsOf = ({ opened, balances, debits, credits, deposits, frozen, freeze, lots, manual, lock }: WalletState): Fields => ({
  opened,
  balances,
  debits,
  credits,
  deposits,
  frozen,
  freeze,
  lots,
  manual,
  lock,
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
    lots: [],
    manual: PersistentMap.empty(),
    lock: null,
  });

const add = (balances: WalletState['balances'], context: WalletContext, delta: MicroUsd) => ({ ...balances, [context]: balances[context] + delta });

/** Folds one stored event, old or new (upcast first: events keep their meaning). */
export function evolve(state: WalletState, stored: WalletEvent): WalletState {
  const event = upcastWalletEvent(stored);
  switch (event.type) {
    case 'WalletOpened':
      return next(state, { opened: true, balances: { virtual: event.data.virtualStartMicro, real: 0 } });
    case 'WalletDebited': {
      const { transferId, amountMicro, from, to } = event.data.transfer;
      const debited = next(state, {
        balances: add(state.balances, from.walletContext, -amountMicro),
        debits: state.debits.set(transferId, { walletContext: from.walletContext, amountMicro, to: destinationOf(to), refunded: false }),
      });
      if (to.kind === 'address') {
        const out: ManualTrade = {
          side: 'withdraw',
          walletContext: from.walletContext,
          mint: to.mint,
          status: 'requested',
          requested: amountMicro,
          destination: to.destination,
        };
        return next(debited, { lock: transferId, manual: state.manual.set(transferId, out) });
      }
      if (to.kind !== 'lots') return debited;
      const buy: ManualTrade = {
        side: 'buy',
        walletContext: from.walletContext,
        mint: to.mint,
        status: 'requested',
        requested: amountMicro,
        ...(to.levels ? { levels: to.levels } : {}),
      };
      return next(debited, { lock: transferId, manual: state.manual.set(transferId, buy) });
    }
    case 'WalletRefunded': {
      const { transferId, walletContext, amountMicro, reason } = event.data;
      const transfer = state.debits.get(transferId)!;
      const refunded = next(state, {
        balances: add(state.balances, walletContext, amountMicro),
        debits: state.debits.set(transferId, { ...transfer, refunded: true }),
      });
      const buy = state.manual.get(transferId);
      if (!buy) return refunded;
      return next(refunded, {
        ...unlocked(state, transferId),
        manual: state.manual.set(transferId, { ...buy, status: 'failed', ...(reason ? { reason } : {}) }),
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
    case 'LotOpened': {
      const { transferId, walletContext, mint, units, costMicro, openedAt, txId, price, usdMicro, stopLoss, takeProfit } = event.data;
      const lot: Lot = { lotId: transferId, walletContext, mint, units, costMicro, openedAt, ...definedLevels({ stopLoss, takeProfit }) };
      const buy = state.manual.get(transferId)!;
      return next(state, {
        ...unlocked(state, transferId),
        lots: [...state.lots, lot],
        manual: state.manual.set(transferId, { ...buy, status: 'done', swap: { txId, price: storedPrice(price), units, usdMicro }, endedAt: openedAt }),
      });
    }
    case 'SellRequested': {
      const { transferId, from } = event.data.transfer;
      const sell: ManualTrade = {
        side: 'sell',
        walletContext: from.walletContext,
        mint: from.mint,
        status: 'requested',
        requested: from.units ?? 0,
        ...(from.levels ? { levels: from.levels } : {}),
      };
      return next(state, { lock: transferId, manual: state.manual.set(transferId, sell) });
    }
    case 'LotsSold': {
      const { transferId, walletContext, reductions, txId, price, units, usdMicro, realizedPnlMicro, at, stopLoss, takeProfit } = event.data;
      const sell = state.manual.get(transferId)!;
      return next(state, {
        ...unlocked(state, transferId),
        balances: add(state.balances, walletContext, usdMicro),
        lots: applyReductions(state.lots, reductions, definedLevels({ stopLoss, takeProfit })),
        manual: state.manual.set(transferId, {
          ...sell,
          status: 'done',
          swap: { txId, price: storedPrice(price), units, usdMicro },
          realizedPnlMicro,
          endedAt: at,
        }),
      });
    }
    case 'WalletWithdrawn': {
      const { transferId, amountMicro, txId, at } = event.data;
      const out = state.manual.get(transferId)!;
      return next(state, {
        ...unlocked(state, transferId),
        manual: state.manual.set(transferId, {
          ...out,
          status: 'done',
          swap: { txId, price: ONE_USD, units: amountMicro, usdMicro: amountMicro },
          endedAt: at,
        }),
      });
    }
    case 'SellFailed': {
      const { transferId, reason, at } = event.data;
      const sell = state.manual.get(transferId)!;
      return next(state, { ...unlocked(state, transferId), manual: state.manual.set(transferId, { ...sell, status: 'failed', reason, endedAt: at }) });
    }
    default:
      return assertNever(event);
  }
}

/** The lock released, if this transfer holds it. */
const unlocked = (state: WalletState, transferId: string): { lock: string | null } => ({ lock: state.lock === transferId ? null : state.lock });

/** A withdrawal sends the spend stablecoin: one USD per token. */
const ONE_USD: Price = storedPrice('1');

/** An event's levels (decimal text) as a lot's prices. */
const definedLevels = (levels: { stopLoss?: string | undefined; takeProfit?: string | undefined }) => ({
  ...(levels.stopLoss !== undefined ? { stopLoss: levelFromText(levels.stopLoss) } : {}),
  ...(levels.takeProfit !== undefined ? { takeProfit: levelFromText(levels.takeProfit) } : {}),
});

/**
 * The balance a command may spend. A wallet never used yet holds the virtual start it would open
 * with, so a percentage allocation on first use is computed from the same figure the debit uses.
 */
export function balanceOf(state: Pick<WalletState, 'opened' | 'balances'>, context: WalletContext, virtualStartMicro: MicroUsd): MicroUsd {
  if (state.opened) return state.balances[context];
  return context === 'virtual' ? virtualStartMicro : 0;
}
