// What the transfer process asks for and what it is told: the step commands (one endpoint's
// aggregate each) and the outcomes the steps report. The legs (legs/) choose the steps; the runner
// (commands/transfers/run.ts) executes them.
import type { DomainError } from '../shared/errors.ts';
import type { TransferPlan } from './plan.ts';

/** What a step reports: the fact its endpoint recorded for this transfer id, now or earlier. */
export type TransferOutcome =
  | { type: 'Debited'; amountMicro: number }
  | { type: 'DebitPending' }
  | { type: 'DebitRefused'; error: DomainError }
  | { type: 'Credited' }
  | { type: 'CreditPending' }
  | { type: 'CreditRejected'; reason: string }
  | { type: 'Refunded' }
  /** the destination's reservation before the debit (a beta seat for the pool a follow opens): held, refused, given back */
  | { type: 'Reserved' }
  | { type: 'ReserveRefused'; error: DomainError }
  | { type: 'Released' };

/**
 * The commands the process asks for: debit the source, credit the destination, refund the source;
 * and, for a destination that must hold something before any money moves (a beta seat), reserve it
 * first and give it back once the transfer ends without keeping it.
 */
export type TransferStep =
  | { type: 'TakeSeat'; data: { transfer: TransferPlan } }
  | { type: 'ReleaseSeat'; data: { transfer: TransferPlan } }
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

export type StepType = TransferStep['type'];
export type StepData<T extends StepType> = Extract<TransferStep, { type: T }>['data'];

/**
 * The steps that need the venue (its mark price, a swap, a chain transfer), or read more than one
 * aggregate's state (a beta seat among the agent's seat shards, given back on the user's pools and wallet): each has a handler of its own (commands/transfers/steps-registry.ts). Every
 * other step is one aggregate's decision, described by its leg (`AggregateStep`, legs/leg.ts) and
 * run by the one generic executor (commands/transfers/aggregate-step.ts).
 */
export type PortStepType = 'CreditPool' | 'OpenTradeEntry' | 'BuyLot' | 'SellLots' | 'SettleSell' | 'SendOut' | 'TakeSeat' | 'ReleaseSeat';
export type AggregateStepType = Exclude<StepType, PortStepType>;
