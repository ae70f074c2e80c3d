// The facts of a transfer, whichever aggregate records them, and the status each one moves it to.
// The one projector of transfers in flight (projections/transfers) reads them; a new endpoint adds
// its debit, credit, rejection or refund events here.
import { allocationAddedSchema, transferRejectedSchema } from '../pool/events.ts';
import { walletDebitedSchema, walletRefundedSchema } from '../wallet/events.ts';
import type { TransferPlan } from './plan.ts';

/** How far a transfer has come; higher ranks are later (completed and compensated both end it). */
export const transferProgress = { debited: 1, rejected: 2, completed: 3, compensated: 3 } as const;
export type TransferProgress = keyof typeof transferProgress;

export type TransferFact =
  | { status: 'debited'; transfer: TransferPlan }
  | { status: Exclude<TransferProgress, 'debited'>; transferId: string };

const facts: Record<string, { stream: string; read(data: unknown): TransferFact }> = {
  WalletDebited: { stream: 'wallet-', read: (d) => ({ status: 'debited', transfer: walletDebitedSchema.parse(d).transfer }) },
  AllocationAdded: { stream: 'pool-', read: (d) => ({ status: 'completed', transferId: allocationAddedSchema.parse(d).transferId }) },
  TransferRejected: { stream: 'pool-', read: (d) => ({ status: 'rejected', transferId: transferRejectedSchema.parse(d).transferId }) },
  WalletRefunded: { stream: 'wallet-', read: (d) => ({ status: 'compensated', transferId: walletRefundedSchema.parse(d).transferId }) },
};

/** The transfer fact an event records, or null for any other event. */
export function transferFactOf(event: { streamName: string; type: string; data: unknown }): TransferFact | null {
  const fact = Object.hasOwn(facts, event.type) ? facts[event.type]! : undefined;
  return fact && event.streamName.startsWith(fact.stream) ? fact.read(event.data) : null;
}

export const transferIdOf = (fact: TransferFact) => (fact.status === 'debited' ? fact.transfer.transferId : fact.transferId);
