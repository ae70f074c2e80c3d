// The one transfer runner: asks the process decider for the next step, runs it, folds its outcome,
// until the transfer is over; a group transfer (domain/transfer/group.ts) the same way, its
// members' steps side by side (runGroup). Requests start transfers; the recovery worker resumes them. A step
// that is one aggregate's decision is run from its leg's description (aggregate-step.ts); the
// others from their own registry (steps-registry.ts), which nothing else reads.
import type { Command } from '../../domain/shared/decider.ts';
import { DomainError } from '../../domain/shared/errors.ts';
import { aggregateStepOf, legOf } from '../../domain/transfer/legs/index.ts';
import type { TransferPlan } from '../../domain/transfer/plan.ts';
import { decide as decideGroup, evolve as evolveGroup, type GroupState, type UndoTradeStep } from '../../domain/transfer/group.ts';
import { decide, evolve, isFinished, releaseOnError, type TransferOutcome, type TransferState, type TransferStep } from '../../domain/transfer/process.ts';
import type { PortStepType } from '../../domain/transfer/steps.ts';
import type { Tools } from '../tools.ts';
import { runAggregateStep } from './aggregate-step.ts';
import { stepHandlers } from './steps-registry.ts';
import { undoTrade } from './steps.ts';

/**
 * Past its debit a transfer is finished, not abandoned: its later steps get this long whatever
 * the request's own deadline (a step still losing races then is left to the recovery worker).
 */
const FINISH_MS = 30_000;

/**
 * A step that is one aggregate's decision is run by the generic executor from its leg's
 * description; any other by the handler of its name, as a command with the transfer's metadata.
 */
function perform(tools: Tools, step: TransferStep): Promise<TransferOutcome> {
  const described = aggregateStepOf(step.type);
  if (described) return runAggregateStep(described, step.data, tools);
  const handler = stepHandlers[step.type as PortStepType] as (command: Command<string, TransferStep['data']>, tools: Tools) => Promise<TransferOutcome>;
  return handler({ ...step, metadata: tools.metadata }, tools);
}

/**
 * Wraps each step's run (tests: a step sent twice, a process dying after a step); it must call
 * `run` for the step to happen, and answers what the step reported.
 */
export type AroundStep = (step: TransferStep | UndoTradeStep, run: () => Promise<TransferOutcome>) => Promise<TransferOutcome>;

/**
 * A transfer refused on the way (a lost race past the deadline: a DomainError, nothing appended)
 * gives back what its destination reserved, unless the destination keeps it (the release decides
 * on the streams). Any other error may hide a debit that landed (a connection lost around its
 * commit): the reservation then stays for the recovery's sweep, which decides after its grace
 * period, as does a release that fails. The release at the end of a transfer whose money is over
 * is best effort for the same reason: its failure never turns a transfer that moved into an error.
 */
export async function runTransfer(tools: Tools, start: TransferState, around: AroundStep = (_step, run) => run()): Promise<TransferState> {
  let state = start;
  try {
    for (let step = decide(state); step; step = decide(state)) {
      const stepTools = state.status === 'planned' ? tools : tools.until(Math.max(tools.deadline, tools.deadlineClock.nowMs() + FINISH_MS));
      const next = step;
      const outcome = around(next, () => perform(stepTools, next));
      state = evolve(state, await (isFinished(state) ? outcome.catch((): TransferOutcome => ({ type: 'Released' })) : outcome));
    }
    return state;
  } catch (err) {
    const release = err instanceof DomainError ? releaseOnError(state) : null;
    if (release) await perform(tools.until(tools.deadlineClock.nowMs() + FINISH_MS), release).catch(() => undefined);
    throw err;
  }
}

/**
 * A destination's change that moves no money (a follow opening a pool empty): the destination's
 * reservation, as a transfer of `plan` would take it (legs/ `reservation`), held around `effect`
 * and given back after it unless kept. Refused reservation: its refusal is thrown.
 */
export async function runReserved<T>(tools: Tools, plan: TransferPlan, effect: () => Promise<T>): Promise<T> {
  const reservation = legOf(plan.to).reservation;
  const reserve = reservation?.reserve(plan);
  if (!reservation || !reserve) return effect();
  const taken = await perform(tools, reserve);
  if (taken.type === 'ReserveRefused') throw taken.error;
  try {
    return await effect();
  } finally {
    await perform(tools.until(tools.deadlineClock.nowMs() + FINISH_MS), reservation.release(plan)).catch(() => undefined);
  }
}

/**
 * A group transfer: the steps the group decides are run side by side (each on its own member's
 * streams), their outcomes folded, until the group is over. Past the debits (a group debited at
 * once by its pool's decision starts there) its steps get the same finishing time as a transfer's.
 */
export async function runGroup(tools: Tools, start: GroupState, around: AroundStep = (_step, run) => run()): Promise<GroupState> {
  let state = start;
  for (let steps = decideGroup(state); steps.length > 0; steps = decideGroup(state)) {
    const debiting = state.members.some((m) => m.transfer.status === 'planned');
    const stepTools = debiting ? tools : tools.until(Math.max(tools.deadline, tools.deadlineClock.nowMs() + FINISH_MS));
    const outcomes = await Promise.all(
      steps.map(({ step }) =>
        around(step, () => (step.type === 'UndoTrade' ? undoTrade({ ...step, metadata: tools.metadata }, stepTools) : perform(stepTools, step))),
      ),
    );
    state = steps.reduce((s, { member }, i) => evolveGroup(s, member, outcomes[i]!), state);
  }
  return state;
}
