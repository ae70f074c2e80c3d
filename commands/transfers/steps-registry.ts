// The internal registry: the transfer steps that need a handler of their own (the venue's mark
// price, a swap, a chain transfer, a read beyond one aggregate's state: `PortStepType` of
// domain/transfer/steps.ts), one handler each; the others are run by aggregate-step.ts. Only the transfer runner (run.ts) reads it; the public registry (commands/registry.ts)
// has none of them, so no route, worker or script can dispatch a step: `Dispatch` does not accept
// their names, and the dispatcher refuses a name it does not hold.
import type { Command } from '../../domain/shared/decider.ts';
import type { PortStepType, StepData, TransferOutcome } from '../../domain/transfer/steps.ts';

export type { StepType } from '../../domain/transfer/steps.ts';
import type { Tools } from '../tools.ts';
import { releaseSeat, takeSeat } from './seat-steps.ts';
import { creditPool, openTradeEntry } from './steps.ts';
import { buyLot, sellLots, sendOut, settleSell } from './swap-steps.ts';

type StepHandlers = {
  [T in PortStepType]: (step: Command<T, StepData<T>>, tools: Tools) => Promise<TransferOutcome>;
};

export const stepHandlers: StepHandlers = {
  CreditPool: creditPool,
  OpenTradeEntry: openTradeEntry,
  BuyLot: buyLot,
  SellLots: sellLots,
  SettleSell: settleSell,
  SendOut: sendOut,
  TakeSeat: takeSeat,
  ReleaseSeat: releaseSeat,
};
