// The facts of a transfer, whichever aggregate records them, and the status each one moves it to.
// The one projector of transfers in flight (projections/transfers) reads them; a new endpoint adds
// its debit, credit, rejection, settlement or refund events here.
import { feesClaimedSchema } from '../fees/events.ts';
import { poolEventSchema } from '../pool/events.ts';
import { tradeEventSchema } from '../trade/events.ts';
import { sellRequestedSchema, walletDebitedSchema, walletRefundedSchema } from '../wallet/events.ts';
import { tradeReturnPlan, type TransferPlan } from './plan.ts';

/**
 * How far a transfer has come; higher ranks are later. `pending` waits for the venue (the
 * reconciliation worker's), `paid-out` was paid by a pool and waits for the wallet's credit;
 * debited, paid-out and rejected are in flight for the recovery worker; the rank-4 ones are over.
 */
export const transferProgress = { debited: 1, pending: 2, 'paid-out': 3, rejected: 3, completed: 4, compensated: 4, failed: 4 } as const;
export type TransferProgress = keyof typeof transferProgress;

/** A pool's leg waiting for the venue: what the reconciliation worker submits and polls. */
export interface PendingLeg {
  poolId: string;
  direction: 'in' | 'out';
  amountMicro: number;
}

export type TransferFact =
  /** the source's debit: the plan, and the stream that holds it */
  { status: TransferProgress; transfer: TransferPlan; leg?: PendingLeg } | { status: TransferProgress; transferId: string; leg?: PendingLeg };

const pool = (d: unknown, type: string) => poolEventSchema.parse({ type, data: d });

const trade = (d: unknown, type: string) => tradeEventSchema.parse({ type, data: d });

const poolIdOf = (streamName: string) => streamName.slice('pool-'.length);

const facts: Record<string, { stream: string; read(data: unknown, streamName: string): TransferFact }> = {
  WalletDebited: { stream: 'wallet-', read: (d) => ({ status: 'debited', transfer: walletDebitedSchema.parse(d).transfer }) },
  WithdrawalRequested: {
    stream: 'pool-',
    read: (d, stream) => {
      const e = pool(d, 'WithdrawalRequested');
      if (e.type !== 'WithdrawalRequested') throw new Error('unreachable');
      const { transfer, pending } = e.data;
      if (!pending) return { status: 'paid-out', transfer };
      return { status: 'pending', transfer, leg: { poolId: poolIdOf(stream), direction: 'out', amountMicro: transfer.amountMicro } };
    },
  },
  AllocationAdded: { stream: 'pool-', read: (d) => ({ status: 'completed', transferId: (d as { transferId: string }).transferId }) },
  AllocationPending: {
    stream: 'pool-',
    read: (d, stream) => {
      const { transferId, amountMicro } = d as { transferId: string; amountMicro: number };
      return { status: 'pending', transferId, leg: { poolId: poolIdOf(stream), direction: 'in', amountMicro } };
    },
  },
  AllocationSettled: {
    stream: 'pool-',
    read: (d) => {
      const e = pool(d, 'AllocationSettled');
      if (e.type !== 'AllocationSettled') throw new Error('unreachable');
      const { transferId, direction, outcome } = e.data;
      const status: TransferProgress =
        direction === 'in' ? (outcome === 'confirmed' ? 'completed' : 'rejected') : outcome === 'confirmed' ? 'paid-out' : 'failed';
      return { status, transferId };
    },
  },
  TransferRejected: { stream: 'pool-', read: (d) => ({ status: 'rejected', transferId: (d as { transferId: string }).transferId }) },
  WalletRefunded: { stream: 'wallet-', read: (d) => ({ status: 'compensated', transferId: walletRefundedSchema.parse(d).transferId }) },
  WalletCredited: { stream: 'wallet-', read: (d) => ({ status: 'completed', transferId: (d as { transferId: string }).transferId }) },
  // Manual trades: a buy's debit is WalletDebited (above), its lot's opening the credit; a sell's
  // request is its debit (with the plan), its lots sold the credit, a failed swap ends it.
  LotOpened: { stream: 'wallet-', read: (d) => ({ status: 'completed', transferId: (d as { transferId: string }).transferId }) },
  SellRequested: { stream: 'wallet-', read: (d) => ({ status: 'debited', transfer: sellRequestedSchema.parse(d).transfer }) },
  LotsSold: { stream: 'wallet-', read: (d) => ({ status: 'completed', transferId: (d as { transferId: string }).transferId }) },
  WalletWithdrawn: { stream: 'wallet-', read: (d) => ({ status: 'completed', transferId: (d as { transferId: string }).transferId }) },
  SellFailed: { stream: 'wallet-', read: (d) => ({ status: 'failed', transferId: (d as { transferId: string }).transferId }) },
  // A trade's margin: the pool's lock (the debit, with the plan), the trade's request (the credit)
  // or its rejection, the pool's release; a refused trade moved nothing. The trade id is the
  // transfer id.
  TradeOpened: {
    stream: 'pool-',
    read: (d) => {
      const e = pool(d, 'TradeOpened');
      if (e.type !== 'TradeOpened') throw new Error('unreachable');
      return e.data.transfer ? { status: 'debited', transfer: e.data.transfer } : { status: 'completed', transferId: e.data.tradeId };
    },
  },
  // A fee claim: the fee account's debit (with the plan); the developer's wallet's credit (above) ends it.
  FeesClaimed: { stream: 'fees-', read: (d) => ({ status: 'debited', transfer: feesClaimedSchema.parse(d).transfer }) },
  TradeRefused: { stream: 'pool-', read: (d) => ({ status: 'failed', transferId: (d as { tradeId: string }).tradeId }) },
  TradeRequested: { stream: 'trade-', read: (d) => ({ status: 'completed', transferId: (d as { tradeId: string }).tradeId }) },
  TradeRejected: { stream: 'trade-', read: (d) => ({ status: 'rejected', transferId: (d as { tradeId: string }).tradeId }) },
  // A trade that ended pays its pool back (TradeSettled carries what the plan needs); the pool's
  // close is the credit, or the release of a margin whose trade never opened.
  TradeSettled: {
    stream: 'trade-',
    read: (d) => {
      const e = trade(d, 'TradeSettled');
      if (e.type !== 'TradeSettled') throw new Error('unreachable');
      return { status: 'debited', transfer: tradeReturnPlan(e.data) };
    },
  },
  TradeClosed: {
    stream: 'pool-',
    read: (d) => {
      const e = pool(d, 'TradeClosed');
      if (e.type !== 'TradeClosed') throw new Error('unreachable');
      const { transferId, released, tradeId } = e.data;
      return { status: released ? 'compensated' : 'completed', transferId: transferId ?? tradeId };
    },
  },
};

/** The transfer fact an event records, or null for any other event. */
export function transferFactOf(event: { streamName: string; type: string; data: unknown }): TransferFact | null {
  const fact = Object.hasOwn(facts, event.type) ? facts[event.type]! : undefined;
  return fact && event.streamName.startsWith(fact.stream) ? fact.read(event.data, event.streamName) : null;
}

export const transferIdOf = (fact: TransferFact) => ('transfer' in fact ? fact.transfer.transferId : fact.transferId);
