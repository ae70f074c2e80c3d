// The transfer process: a pure decider over one transfer's state. It asks for the next step (a
// command for one endpoint's aggregate) and folds what the step reports. The runner
// (commands/transfers/run.ts) executes the steps through the dispatcher; every step is idempotent
// by the transfer id, so a step repeated after a crash, by the settlement or by the recovery
// worker, reports what its endpoint recorded and changes nothing.
//
//   planned --Debited--> debited --Credited--> completed
//      |                    |--CreditPending--> pending (the pool waits for the venue)
//      |                    `--CreditRejected--> rejected --Refunded--> compensated
//      |--DebitPending--> pending (the pool reserved it; the venue has not paid it out yet)
//      |--DebitRefused--> failed (nothing moved: refused, or the venue failed the payout)
//      `--Refunded--> compensated (a retry of a transfer given back already)
//
// A pending transfer is resumed from `planned` once the reconciliation worker settles its pool's
// leg: the steps then report Debited/Credited (confirmed) or DebitRefused/CreditRejected (failed).
import type { DomainError } from '../shared/errors.ts';
import type { Endpoint, TransferPlan } from './plan.ts';

export type TransferStatus = 'planned' | 'debited' | 'pending' | 'rejected' | 'completed' | 'compensated' | 'failed';

export interface TransferState {
  status: TransferStatus;
  plan: TransferPlan;
  /** resumed (settlement, recovery): the credit moves the money and nothing else (no settings of the request) */
  resumed: boolean;
  /** why the debit was refused (failed) */
  refusal?: DomainError;
  /** why the destination rejected the credit (rejected, compensated) */
  rejection?: string;
}

/** What a step reports: the fact its endpoint recorded for this transfer id, now or earlier. */
export type TransferOutcome =
  | { type: 'Debited'; amountMicro: number }
  | { type: 'DebitPending' }
  | { type: 'DebitRefused'; error: DomainError }
  | { type: 'Credited' }
  | { type: 'CreditPending' }
  | { type: 'CreditRejected'; reason: string }
  | { type: 'Refunded' };

/** The commands the process asks for: debit the source, credit the destination, refund the source. */
export type TransferStep =
  | { type: 'DebitWallet'; data: { transfer: TransferPlan } }
  | { type: 'DebitPool'; data: { transfer: TransferPlan } }
  | { type: 'CreditPool'; data: { transfer: TransferPlan; resumed: boolean } }
  | { type: 'CreditWallet'; data: { transfer: TransferPlan } }
  | { type: 'RefundWallet'; data: { userId: string; transferId: string } };

/** A new transfer, started by a request. */
export const planned = (plan: TransferPlan): TransferState => ({ status: 'planned', plan, resumed: false });

/** A transfer found unfinished, resumed by the settlement or the recovery worker: every step reports what it recorded. */
export const resumed = (plan: TransferPlan): TransferState => ({ status: 'planned', plan, resumed: true });

export const isFinished = (state: TransferState): boolean =>
  state.status === 'completed' || state.status === 'compensated' || state.status === 'failed';

const debitOf = (plan: TransferPlan): TransferStep =>
  plan.from.kind === 'wallet' ? { type: 'DebitWallet', data: { transfer: plan } } : { type: 'DebitPool', data: { transfer: plan } };

const creditOf = (plan: TransferPlan, isResumed: boolean): TransferStep =>
  plan.to.kind === 'pool' ? { type: 'CreditPool', data: { transfer: plan, resumed: isResumed } } : { type: 'CreditWallet', data: { transfer: plan } };

/** Only a wallet gives money back today: a pool's payout is never rejected by a wallet. */
function refundOf(plan: TransferPlan, from: Endpoint): TransferStep {
  if (from.kind !== 'wallet') throw new Error(`transfer ${plan.transferId}: no refund step for a ${from.kind} source`);
  return { type: 'RefundWallet', data: { userId: from.userId, transferId: plan.transferId } };
}

/** The next step, or null when the transfer is over or waits for the venue. */
export function decide(state: TransferState): TransferStep | null {
  const { plan } = state;
  switch (state.status) {
    case 'planned':
      return debitOf(plan);
    case 'debited':
      return creditOf(plan, state.resumed);
    case 'rejected':
      return refundOf(plan, plan.from);
    case 'pending':
    case 'completed':
    case 'compensated':
    case 'failed':
      return null;
  }
}

const allowed: Record<TransferStatus, ReadonlyArray<TransferOutcome['type']>> = {
  planned: ['Debited', 'DebitPending', 'DebitRefused', 'Refunded'],
  debited: ['Credited', 'CreditPending', 'CreditRejected'],
  rejected: ['Refunded'],
  pending: [],
  completed: [],
  compensated: [],
  failed: [],
};

/** Folds a step's outcome. An outcome the state does not expect is a bug, never silently taken. */
export function evolve(state: TransferState, outcome: TransferOutcome): TransferState {
  if (!allowed[state.status].includes(outcome.type)) {
    throw new Error(`transfer ${state.plan.transferId}: ${outcome.type} cannot follow ${state.status}`);
  }
  switch (outcome.type) {
    case 'Debited':
      // The source's record is the truth: a retried request credits what was debited, not what it
      // planned; a close that found nothing to pay out is over.
      if (outcome.amountMicro === 0) return { ...state, status: 'completed', plan: { ...state.plan, amountMicro: 0 } };
      return { ...state, status: 'debited', plan: { ...state.plan, amountMicro: outcome.amountMicro } };
    case 'DebitPending':
    case 'CreditPending':
      return { ...state, status: 'pending' };
    case 'DebitRefused':
      return { ...state, status: 'failed', refusal: outcome.error };
    case 'Credited':
      return { ...state, status: 'completed' };
    case 'CreditRejected':
      return { ...state, status: 'rejected', rejection: outcome.reason };
    case 'Refunded':
      return { ...state, status: 'compensated' };
  }
}
