// The transfer process: a pure decider over one transfer's state. It asks for the next step (a
// command for one endpoint's aggregate, chosen by the legs: legs/) and folds what the step
// reports. The runner (commands/transfers/run.ts) executes the steps, from their legs'
// descriptions or their own handlers; every step is idempotent by the transfer id, so a step
// repeated after a crash, by the settlement or by the recovery worker, reports what its endpoint
// recorded and changes nothing.
//
//   planned --Reserved--> planned, the destination's reservation held (a beta seat; only where its leg
//      |                  asks for one, and never when resumed: a recorded debit took it before)
//      |--ReserveRefused--> failed (nothing moved: the beta is full)
//   planned --Debited--> debited --Credited--> completed
//      |                    |--CreditPending--> pending (the pool waits for the venue)
//      |                    `--CreditRejected--> rejected --Refunded--> compensated
//      |--DebitPending--> pending (the pool reserved it; the venue has not paid it out yet)
//      |--DebitRefused--> failed (nothing moved: refused, or the venue failed the payout)
//      `--Refunded--> compensated (a retry of a transfer given back already)
//
// A reservation held is given back once the transfer is over (completed, compensated, failed) or
// stopped by an error (`releaseOnError`): the release keeps what the destination holds or will (a
// pool opened with the seat claim, a debit waiting to open one), so it may run in every case.
//
// A pending transfer is resumed from `planned` once the reconciliation worker settles its pool's
// leg: the steps then report Debited/Credited (confirmed) or DebitRefused/CreditRejected (failed).
//
// What each kind of endpoint does is its leg's (legs/<kind>.ts); in short:
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
import { legOf } from './legs/index.ts';
import type { TransferPlan } from './plan.ts';
import { isFinished as isOver, type TransferStatus } from './status.ts';
import type { TransferOutcome, TransferStep } from './steps.ts';

export type { TransferStatus } from './status.ts';
export type { TransferOutcome, TransferStep } from './steps.ts';

export interface TransferState {
  status: TransferStatus;
  plan: TransferPlan;
  /** resumed (settlement, recovery): the credit moves the money and nothing else (no settings of the request) */
  resumed: boolean;
  /** why the debit was refused (failed) */
  refusal?: DomainError;
  /** why the destination rejected the credit (rejected, compensated) */
  rejection?: string;
  /** the destination's reservation (legs/leg.ts `reservation`): held once reserved, released at the end */
  reservation?: 'held' | 'released';
}

/** A new transfer, started by a request. */
export const planned = (plan: TransferPlan): TransferState => ({ status: 'planned', plan, resumed: false });

/** A transfer found unfinished, resumed by the settlement or the recovery worker: every step reports what it recorded. */
export const resumed = (plan: TransferPlan): TransferState => ({ status: 'planned', plan, resumed: true });

export const isFinished = (state: TransferState): boolean => isOver(state.status);

// The steps come from the legs (legs/): the other end's leg first, where its money decides the step
// (a trade's margin, a sell's settlement), then the endpoint's own.

function debitOf(plan: TransferPlan): TransferStep {
  const debit = legOf(plan.to).counterpart?.debit ?? legOf(plan.from).debit;
  if (!debit) throw new Error(`transfer ${plan.transferId}: a ${plan.from.kind} endpoint never pays`);
  return debit(plan);
}

function creditOf(plan: TransferPlan, isResumed: boolean): TransferStep {
  const credit = legOf(plan.from).counterpart?.credit ?? legOf(plan.to).credit;
  if (!credit) throw new Error(`transfer ${plan.transferId}: a ${plan.to.kind} endpoint takes no credit: it is paid by its own aggregate, never by a transfer`);
  return credit(plan, isResumed);
}

/** A wallet takes back a refused credit, a pool a trade's margin; a pool never rejects what a trade pays back. */
function refundOf(plan: TransferPlan, reason: string | undefined): TransferStep {
  const refund = legOf(plan.to).counterpart?.refund ?? legOf(plan.from).refund;
  if (!refund) throw new Error(`transfer ${plan.transferId}: no refund step for a ${plan.from.kind} source`);
  return refund(plan, reason);
}

/** What the destination reserves before the debit: only a request's own transfer, and only once. */
function reserveOf(state: TransferState): TransferStep | null {
  if (state.resumed || state.reservation !== undefined) return null;
  return legOf(state.plan.to).reservation?.reserve(state.plan) ?? null;
}

/** The step that gives back a reservation still held; null: none is. */
export function releaseOnError(state: TransferState): TransferStep | null {
  return state.reservation === 'held' ? legOf(state.plan.to).reservation!.release(state.plan) : null;
}

/** The next step, or null when the transfer is over (its reservation given back) or waits for the venue. */
export function decide(state: TransferState): TransferStep | null {
  const { plan } = state;
  switch (state.status) {
    case 'planned':
      return reserveOf(state) ?? debitOf(plan);
    case 'debited':
      return creditOf(plan, state.resumed);
    case 'rejected':
      return refundOf(plan, state.rejection);
    case 'pending':
      return null;
    case 'completed':
    case 'compensated':
    case 'failed':
      return releaseOnError(state);
  }
}

const allowed: Record<TransferStatus, ReadonlyArray<TransferOutcome['type']>> = {
  planned: ['Reserved', 'ReserveRefused', 'Debited', 'DebitPending', 'DebitRefused', 'Refunded'],
  debited: ['Credited', 'CreditPending', 'CreditRejected'],
  rejected: ['Refunded'],
  pending: [],
  completed: ['Released'],
  compensated: ['Released'],
  failed: ['Released'],
};

/** Folds a step's outcome. An outcome the state does not expect is a bug, never silently taken. */
export function evolve(state: TransferState, outcome: TransferOutcome): TransferState {
  const reservationFits =
    outcome.type === 'Reserved' || outcome.type === 'ReserveRefused'
      ? state.reservation === undefined
      : outcome.type !== 'Released' || state.reservation === 'held';
  if (!allowed[state.status].includes(outcome.type) || !reservationFits) {
    throw new Error(`transfer ${state.plan.transferId}: ${outcome.type} cannot follow ${state.status}`);
  }
  switch (outcome.type) {
    case 'Reserved':
      return { ...state, reservation: 'held' };
    case 'Released':
      return { ...state, reservation: 'released' };
    case 'Debited':
      // The source's record is the truth: a retried request credits what was debited, not what it
      // planned; a pool's close that found nothing to pay out is over (a trade that lost its whole
      // margin still closes in its pool).
      if (outcome.amountMicro === 0 && legOf(state.plan.from).emptyDebitEnds) return { ...state, status: 'completed', plan: { ...state.plan, amountMicro: 0 } };
      return { ...state, status: 'debited', plan: { ...state.plan, amountMicro: outcome.amountMicro } };
    case 'DebitPending':
    case 'CreditPending':
      return { ...state, status: 'pending' };
    case 'ReserveRefused':
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
