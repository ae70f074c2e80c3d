// The one transfer runner: asks the process decider for the next step, dispatches it, folds its
// outcome, until the transfer is over. Requests start transfers; the recovery worker resumes them.
import { decide, evolve, type TransferOutcome, type TransferState, type TransferStep } from '../../domain/transfer/process.ts';
import type { Tools } from '../dispatch.ts';

/**
 * Past its debit a transfer is finished, not abandoned: its later steps get this long whatever
 * the request's own deadline (a step still losing races then is left to the recovery worker).
 */
const FINISH_MS = 30_000;

function perform(tools: Tools, step: TransferStep, options: { deadline?: number }): Promise<TransferOutcome> {
  switch (step.type) {
    case 'DebitWallet':
      return tools.dispatch('DebitWallet', step.data, options);
    case 'DebitPool':
      return tools.dispatch('DebitPool', step.data, options);
    case 'CreditPool':
      return tools.dispatch('CreditPool', step.data, options);
    case 'CreditWallet':
      return tools.dispatch('CreditWallet', step.data, options);
    case 'RefundWallet':
      return tools.dispatch('RefundWallet', step.data, options);
    case 'LockMargin':
      return tools.dispatch('LockMargin', step.data, options);
    case 'OpenTradeEntry':
      return tools.dispatch('OpenTradeEntry', step.data, options);
    case 'ReleaseMargin':
      return tools.dispatch('ReleaseMargin', step.data, options);
    case 'DebitTrade':
      return tools.dispatch('DebitTrade', step.data, options);
    case 'ReturnMargin':
      return tools.dispatch('ReturnMargin', step.data, options);
  }
}

export async function runTransfer(tools: Tools, start: TransferState): Promise<TransferState> {
  let state = start;
  for (let step = decide(state); step; step = decide(state)) {
    const options = state.status === 'planned' ? {} : { deadline: Math.max(tools.deadline, Date.now() + FINISH_MS) };
    state = evolve(state, await perform(tools, step, options));
  }
  return state;
}
