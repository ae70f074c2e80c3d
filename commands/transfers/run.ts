// The one transfer runner: asks the process decider for the next step, dispatches it, folds its
// outcome, until the transfer is over. Requests start transfers; the recovery worker resumes them.
import { decide, evolve, type TransferOutcome, type TransferState, type TransferStep } from '../../domain/transfer/process.ts';
import type { Tools } from '../dispatch.ts';

/**
 * Past its debit a transfer is finished, not abandoned: its later steps get this long whatever
 * the request's own deadline (a step still losing races then is left to the recovery worker).
 */
const FINISH_MS = 30_000;

/** Every step is the command of its name, with that command's data. */
function perform(tools: Tools, step: TransferStep, options: { deadline?: number }): Promise<TransferOutcome> {
  return tools.dispatch(step.type, step.data, options);
}

export async function runTransfer(tools: Tools, start: TransferState): Promise<TransferState> {
  let state = start;
  for (let step = decide(state); step; step = decide(state)) {
    const options = state.status === 'planned' ? {} : { deadline: Math.max(tools.deadline, Date.now() + FINISH_MS) };
    state = evolve(state, await perform(tools, step, options));
  }
  return state;
}
