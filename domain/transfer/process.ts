// The transfer process: a pure decider over one transfer's state. It asks for the next step (a
// command for one endpoint's aggregate) and folds what the step reports. The runner
// (commands/transfers/run.ts) executes the steps through the dispatcher; every step is idempotent
// by the transfer id, so a step repeated after a crash, or by the recovery worker, changes nothing.
//
//   planned --Debited--> debited --Credited--> completed
//      |                    `--CreditRejected--> rejected --Refunded--> compensated
//      |--DebitRefused--> failed (nothing moved)
//      `--Refunded--> compensated (a retry of a transfer given back already)
import type { DomainError } from '../shared/errors.ts';
import type { TransferPlan } from './plan.ts';

export type TransferStatus = 'planned' | 'debited' | 'rejected' | 'completed' | 'compensated' | 'failed';

export interface TransferState {
  status: TransferStatus;
  plan: TransferPlan;
  /** resumed by the recovery: the credit moves the money and nothing else (no settings of the request) */
  resumed: boolean;
  /** why the debit was refused (failed) */
  refusal?: DomainError;
  /** why the destination rejected the credit (rejected, compensated) */
  rejection?: string;
}

/** What a step reports: the fact its endpoint recorded for this transfer id, now or earlier. */
export type TransferOutcome =
  | { type: 'Debited'; amountMicro: number }
  | { type: 'DebitRefused'; error: DomainError }
  | { type: 'Credited' }
  | { type: 'CreditRejected'; reason: string }
  | { type: 'Refunded' };

/** The commands the process asks for, one per endpoint role. */
export type TransferStep =
  | { type: 'DebitWallet'; data: { transfer: TransferPlan } }
  | { type: 'CreditPool'; data: { transfer: TransferPlan; resumed: boolean } }
  | { type: 'RefundWallet'; data: { userId: string; transferId: string } };

/** A new transfer, started by a request. */
export const planned = (plan: TransferPlan): TransferState => ({ status: 'planned', plan, resumed: false });

/** A transfer found debited and unfinished, resumed by the recovery worker. */
export const resumed = (plan: TransferPlan): TransferState => ({ status: 'debited', plan, resumed: true });

export const isFinished = (state: TransferState): boolean =>
  state.status === 'completed' || state.status === 'compensated' || state.status === 'failed';

/** The next step, or null when the transfer is over. */
export function decide(state: TransferState): TransferStep | null {
  const { plan } = state;
  switch (state.status) {
    case 'planned':
      return { type: 'DebitWallet', data: { transfer: plan } };
    case 'debited':
      return { type: 'CreditPool', data: { transfer: plan, resumed: state.resumed } };
    case 'rejected':
      return { type: 'RefundWallet', data: { userId: plan.from.userId, transferId: plan.transferId } };
    case 'completed':
    case 'compensated':
    case 'failed':
      return null;
  }
}

const allowed: Record<TransferStatus, ReadonlyArray<TransferOutcome['type']>> = {
  planned: ['Debited', 'DebitRefused', 'Refunded'],
  debited: ['Credited', 'CreditRejected'],
  rejected: ['Refunded'],
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
      // The source's record is the truth: a retried request credits what was debited, not what it planned.
      return { ...state, status: 'debited', plan: { ...state.plan, amountMicro: outcome.amountMicro } };
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
