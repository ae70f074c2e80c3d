// The transfer process: a pure decider over one transfer's state. It asks for the next step (a
// command for one endpoint's aggregate) and folds what the step reports. The runner
// (commands/transfers/run.ts) executes the steps from its own registry; every step is idempotent
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
//
// Trades: a pool pays a trade its margin (LockMargin reports the pool's decision on the trade,
// taken for all the trades of a signal together; OpenTradeEntry requests the trade; a trade that
// cannot open is given back by ReleaseMargin). A trade that ended pays its pool back the margin and
// its PnL (DebitTrade reports the trade's settlement, ReturnMargin closes it in the pool); a loss
// of the whole margin returns 0 and still closes it.
//
// Manual trades (a wallet's buys and sells): a buy debits the wallet context (DebitWallet holds the
// wallet's trade lock) and BuyLot swaps at the venue and opens the lot, or reports the swap failed
// (the wallet is refunded, the lock released). A sell's debit, SellLots, records the request (the
// lock), swaps at the venue and reports what the swap fetched; the lots are untouched until then,
// and a failed swap leaves them as they were. SettleSell reduces the lots and credits the proceeds.
// A withdrawal (a sell of the spend stablecoin) debits the real context under the same lock, and
// SendOut sends it to the address, or reports the chain failed it (refunded).
//
// Fee claims: an agent's fee account pays its developer's real wallet context (DebitFees records the
// claim on the account, CreditWallet credits it); a wallet never rejects a credit.
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
  | { type: 'RefundWallet'; data: { userId: string; transferId: string; reason?: string } }
  | { type: 'LockMargin'; data: { transfer: TransferPlan } }
  | { type: 'OpenTradeEntry'; data: { transfer: TransferPlan } }
  | { type: 'ReleaseMargin'; data: { transfer: TransferPlan } }
  | { type: 'DebitTrade'; data: { transfer: TransferPlan } }
  | { type: 'ReturnMargin'; data: { transfer: TransferPlan } }
  | { type: 'BuyLot'; data: { transfer: TransferPlan } }
  | { type: 'SellLots'; data: { transfer: TransferPlan } }
  | { type: 'SettleSell'; data: { transfer: TransferPlan } }
  | { type: 'SendOut'; data: { transfer: TransferPlan } }
  | { type: 'DebitFees'; data: { transfer: TransferPlan } };

/** A new transfer, started by a request. */
export const planned = (plan: TransferPlan): TransferState => ({ status: 'planned', plan, resumed: false });

/** A transfer found unfinished, resumed by the settlement or the recovery worker: every step reports what it recorded. */
export const resumed = (plan: TransferPlan): TransferState => ({ status: 'planned', plan, resumed: true });

export const isFinished = (state: TransferState): boolean => state.status === 'completed' || state.status === 'compensated' || state.status === 'failed';

function debitOf(plan: TransferPlan): TransferStep {
  const transfer = { transfer: plan };
  switch (plan.from.kind) {
    case 'wallet':
      return { type: 'DebitWallet', data: transfer };
    case 'pool':
      return plan.to.kind === 'trade' ? { type: 'LockMargin', data: transfer } : { type: 'DebitPool', data: transfer };
    case 'trade':
      return { type: 'DebitTrade', data: transfer };
    case 'lots':
      return { type: 'SellLots', data: transfer };
    case 'fees':
      return { type: 'DebitFees', data: transfer };
    case 'address':
      throw new Error(`transfer ${plan.transferId}: an address never pays`);
  }
}

function creditOf(plan: TransferPlan, isResumed: boolean): TransferStep {
  const transfer = { transfer: plan };
  switch (plan.to.kind) {
    case 'pool':
      return plan.from.kind === 'trade' ? { type: 'ReturnMargin', data: transfer } : { type: 'CreditPool', data: { transfer: plan, resumed: isResumed } };
    case 'wallet':
      return plan.from.kind === 'lots' ? { type: 'SettleSell', data: transfer } : { type: 'CreditWallet', data: transfer };
    case 'trade':
      return { type: 'OpenTradeEntry', data: transfer };
    case 'lots':
      return { type: 'BuyLot', data: transfer };
    case 'address':
      return { type: 'SendOut', data: transfer };
    case 'fees':
      throw new Error(`transfer ${plan.transferId}: a fee account is paid by its pools' settlements, never by a transfer`);
  }
}

/** A wallet takes back a refused credit, a pool a trade's margin; a pool never rejects what a trade pays back. */
function refundOf(plan: TransferPlan, from: Endpoint, reason: string | undefined): TransferStep {
  if (from.kind === 'wallet') return { type: 'RefundWallet', data: { userId: from.userId, transferId: plan.transferId, ...(reason ? { reason } : {}) } };
  if (from.kind === 'pool' && plan.to.kind === 'trade') return { type: 'ReleaseMargin', data: { transfer: plan } };
  throw new Error(`transfer ${plan.transferId}: no refund step for a ${from.kind} source`);
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
      return refundOf(plan, plan.from, state.rejection);
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
      // planned; a pool's close that found nothing to pay out is over (a trade that lost its whole
      // margin still closes in its pool).
      if (outcome.amountMicro === 0 && state.plan.from.kind === 'pool') return { ...state, status: 'completed', plan: { ...state.plan, amountMicro: 0 } };
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
