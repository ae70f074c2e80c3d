// A group transfer: several transfers that move together or not at all (a signal's trades in one
// pool: both or neither). A pure decider over its members' transfer states (process.ts): it asks
// for the next steps, which the runner (commands/transfers/run.ts `runGroup`) runs side by side,
// and folds what each member's step reports.
//
//   members run their own process (debit, credit) --all completed--> completed
//        |                                          --all refused---> failed (the debit was refused)
//        `--a member's credit rejected (or its debit refused)--> compensating:
//             1. each completed member is undone: UndoTrade ends it at the mark, then its return
//                transfer (the trade pays its pool back, process.ts) runs inside the group;
//             2. then each rejected member is refunded (its own process's refund, ReleaseMargin)
//           --> compensated
//
// The undos come before the refunds on purpose: a rejected member stays in flight (the transfers
// projector lists it, projections/transfers) until its refund, so a crash anywhere in the
// compensation leaves a member for the recovery worker, which resumes the whole group
// (commands/transfers/resume.ts) and the group ends both or neither. Every step is idempotent by
// its transfer id, so a repeated step, or a group run again from its start, changes nothing.
import { tradeReturnPlan, type TransferPlan } from './plan.ts';
import { decide as decideTransfer, evolve as evolveTransfer, planned, resumed, type TransferOutcome, type TransferState } from './process.ts';
import { transferIds } from './ids.ts';
import type { TransferStep } from './steps.ts';

export interface GroupMember {
  /** the member's own transfer */
  transfer: TransferState;
  /** compensation of a member that completed: `closing` until its trade ended, then the trade's return transfer */
  undo?: 'closing' | TransferState;
}

export interface GroupState {
  members: GroupMember[];
}

/**
 * The group's own step, no transfer's (a single transfer never undoes): the trade a completed member
 * opened ends at the venue's mark; it reports Refunded once the trade ended. The runner runs it
 * (commands/transfers/run.ts), its handler beside the trade steps (commands/transfers/steps.ts).
 */
export interface UndoTradeStep {
  type: 'UndoTrade';
  data: { transfer: TransferPlan };
}

/** A step of one member, named by the member's transfer id. */
export interface GroupStep {
  member: string;
  step: TransferStep | UndoTradeStep;
}

export type GroupStatus = 'running' | 'pending' | 'completed' | 'compensated' | 'failed';

const groupOf = (plans: TransferPlan[], start: (plan: TransferPlan) => TransferState): GroupState => {
  if (plans.length === 0) throw new Error('a group transfer has at least one member');
  return { members: plans.map((plan) => ({ transfer: start(plan) })) };
};

/** A new group, started by a request. */
export const groupPlanned = (plans: TransferPlan[]): GroupState => groupOf(plans, planned);

/**
 * A group whose debit is decided already, for all its members at once (a pool's OpenTrade on a
 * signal's trades records each member's debit with its plan): it goes on from the credits.
 */
export const groupDebited = (plans: TransferPlan[]): GroupState =>
  groupOf(plans, (plan) => evolveTransfer(planned(plan), { type: 'Debited', amountMicro: plan.amountMicro }));

/** A group found unfinished, resumed by the recovery worker: every step reports what it recorded. */
export const groupResumed = (plans: TransferPlan[]): GroupState => groupOf(plans, resumed);

const idOf = (member: GroupMember): string => member.transfer.plan.transferId;

/** A member whose own transfer went wrong: its credit was rejected (then refunded), or its debit refused. */
const wentWrong = (member: GroupMember): boolean => ['rejected', 'compensated', 'failed'].includes(member.transfer.status);

/** The group gives back what moved: some member went wrong. */
export const isCompensating = (state: GroupState): boolean => state.members.some(wentWrong);

/** The trade's return transfer of an undone member: its amount is what the trade records it pays back (DebitTrade). */
function returnOf(plan: TransferPlan): TransferState {
  if (plan.to.kind !== 'trade') throw new Error(`transfer ${plan.transferId}: only a trade can be undone`);
  const { tradeId, poolId } = plan.to;
  return planned(tradeReturnPlan({ tradeId, poolId, transferId: transferIds.tradeReturn(tradeId), returnedMicro: 0 }));
}

const stepsOf = (members: GroupMember[], stepOf: (m: GroupMember) => GroupStep['step'] | null): GroupStep[] =>
  members.flatMap((m) => {
    const step = stepOf(m);
    return step ? [{ member: idOf(m), step }] : [];
  });

/**
 * The next steps, to run side by side (each on its own member's streams), or none when the group
 * is over or waits for the venue: the members' debits and credits first; then, if a member went
 * wrong, the undos of the completed ones; then the refunds of the rejected ones.
 */
export function decide(state: GroupState): GroupStep[] {
  const forward = stepsOf(state.members, (m) => (m.transfer.status === 'planned' || m.transfer.status === 'debited' ? decideTransfer(m.transfer) : null));
  if (forward.length > 0 || !isCompensating(state)) return forward;
  const undos = stepsOf(state.members, (m) => {
    if (m.transfer.status !== 'completed') return null;
    if (m.undo === undefined || m.undo === 'closing') return { type: 'UndoTrade', data: { transfer: m.transfer.plan } };
    return decideTransfer(m.undo);
  });
  if (undos.length > 0) return undos;
  return stepsOf(state.members, (m) => (m.transfer.status === 'rejected' ? decideTransfer(m.transfer) : null));
}

/** Folds what one member's step reported: its own transfer's outcome, or its undo's. */
export function evolve(state: GroupState, member: string, outcome: TransferOutcome): GroupState {
  const members = state.members.map((m): GroupMember => {
    if (idOf(m) !== member) return m;
    if (m.transfer.status !== 'completed') return { ...m, transfer: evolveTransfer(m.transfer, outcome) };
    if (m.undo === undefined || m.undo === 'closing') {
      // UndoTrade reports the trade ended (Refunded: it gives the margin back); its return transfer pays the pool.
      if (outcome.type !== 'Refunded') throw new Error(`transfer ${member}: ${outcome.type} cannot follow its undo`);
      return { ...m, undo: returnOf(m.transfer.plan) };
    }
    return { ...m, undo: evolveTransfer(m.undo, outcome) };
  });
  if (!members.some((m) => idOf(m) === member)) throw new Error(`no member ${member} in the group`);
  return { members };
}

/** How far the group came: completed (every member), failed (nothing moved), compensated (all given back), pending, or still running. */
export function groupStatus(state: GroupState): GroupStatus {
  if (decide(state).length > 0) return 'running';
  const statuses = state.members.map((m) => m.transfer.status);
  if (statuses.every((s) => s === 'completed')) return 'completed';
  if (statuses.every((s) => s === 'failed')) return 'failed';
  if (statuses.includes('pending') || state.members.some((m) => typeof m.undo === 'object' && m.undo.status === 'pending')) return 'pending';
  return isCompensating(state) ? 'compensated' : 'running';
}

/** Why the group was given back or failed: the first member's rejection or refusal, in the group's order. */
export function groupReason(state: GroupState): string | undefined {
  for (const { transfer } of state.members) {
    const reason = transfer.rejection ?? transfer.refusal?.reason;
    if (reason) return reason;
  }
  return undefined;
}
