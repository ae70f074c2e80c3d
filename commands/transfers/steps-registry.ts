// The internal registry: the transfer steps (domain/transfer/process.ts, `TransferStep`), one
// handler each. Only the transfer runner (run.ts) reads it; the public registry (commands/registry.ts)
// has none of them, so no route, worker or script can dispatch a step: `Dispatch` does not accept
// their names, and the dispatcher refuses a name it does not hold.
import type { Command } from '../../domain/shared/decider.ts';
import type { TransferOutcome, TransferStep } from '../../domain/transfer/process.ts';
import type { Tools } from '../tools.ts';
import {
  creditPool,
  creditWallet,
  debitFees,
  debitPool,
  debitTrade,
  debitWallet,
  lockMargin,
  openTradeEntry,
  refundWallet,
  releaseMargin,
  returnMargin,
} from './steps.ts';
import { buyLot, sellLots, sendOut, settleSell } from './swap-steps.ts';

export type StepType = TransferStep['type'];

type StepHandlers = {
  [T in StepType]: (step: Command<T, Extract<TransferStep, { type: T }>['data']>, tools: Tools) => Promise<TransferOutcome>;
};

export const stepHandlers: StepHandlers = {
  DebitWallet: debitWallet,
  DebitPool: debitPool,
  CreditPool: creditPool,
  CreditWallet: creditWallet,
  RefundWallet: refundWallet,
  LockMargin: lockMargin,
  OpenTradeEntry: openTradeEntry,
  ReleaseMargin: releaseMargin,
  DebitTrade: debitTrade,
  ReturnMargin: returnMargin,
  BuyLot: buyLot,
  SellLots: sellLots,
  SettleSell: settleSell,
  SendOut: sendOut,
  DebitFees: debitFees,
};
