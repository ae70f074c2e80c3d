// A leg: what one endpoint kind (plan.ts) brings to a transfer, with no knowledge of the other end.
// The steps that make it pay, take a credit or take back a refused one (each optional: an address
// never pays, a fee account is never credited); the owner and key of its endpoint; and the facts
// its aggregate records for a transfer, among them the debit events that carry the plan (the
// projector reads the facts through facts.ts, the recovery reads the plan back from a debit).
//
// Where a pair matters, the leg whose money it is owns the other end's step (`counterpart`): a
// trade's money is its pool's margin, so the trade leg says that the pool's debit is LockMargin,
// its refund ReleaseMargin and its credit (the trade paying back) ReturnMargin; a sell's proceeds
// and the shrinking of its lots are one record, so the lots leg says the wallet's credit is
// SettleSell. The process asks the other end's leg first, then the endpoint's own.
import type { Aggregate, Command, CommandBody, DomainEvent } from '../../shared/decider.ts';
import { invariant } from '../../shared/errors.ts';
import type { Endpoint, TransferPlan } from '../plan.ts';
import type { AggregateStepType, StepData, TransferOutcome, TransferStep } from '../steps.ts';
import type { TransferProgress } from '../status.ts';

export type EndpointKind = Endpoint['kind'];
export type EndpointOf<K extends EndpointKind> = Extract<Endpoint, { kind: K }>;

/** A pool's leg waiting for the venue: what the reconciliation worker submits and polls. */
export interface PendingLeg {
  poolId: string;
  direction: 'in' | 'out';
  amountMicro: number;
}

export type TransferFact =
  /** the source's debit: the plan, and the stream that holds it */
  { status: TransferProgress; transfer: TransferPlan; leg?: PendingLeg } | { status: TransferProgress; transferId: string; leg?: PendingLeg };

/** An event an aggregate records for a transfer, and how it reads. */
export interface FactReader {
  /** the prefix of the streams that record it (another aggregate's event of the same name is not a fact) */
  stream: string;
  read(data: unknown, streamName: string): TransferFact;
  /** a debit event: the plan it carries (null: this one carries none), parsed by its aggregate's event schema */
  plan?(event: { type: string; data: unknown }): TransferPlan | null;
}

export type Debit = (plan: TransferPlan) => TransferStep;
export type Credit = (plan: TransferPlan, resumed: boolean) => TransferStep;
export type Refund = (plan: TransferPlan, reason: string | undefined) => TransferStep;

/** What a step's command takes from the runner's configuration. */
export interface StepEnv {
  virtualStartMicro: number;
}

/**
 * A step that is one aggregate's decision, as data: the aggregate, which instance (`id`), the
 * command to decide there (none: the step only reads the state, the decision was taken before),
 * and what the aggregate's state then says happened to the transfer (`outcomeFor`, pure; a step
 * repeated after a crash reads what the first run recorded). `refusable`: a refusal of the command
 * is the debit refused (DebitRefused), not an error. `commandOn`: a command that needs the state
 * first (null: nothing left to decide, an earlier run did it); the command is decided on fresh
 * state all the same.
 */
export interface AggregateStep<T extends AggregateStepType = AggregateStepType, C extends Command = Command, S = unknown> {
  aggregate: Aggregate<C, S, DomainEvent>;
  id(data: StepData<T>): string;
  command?(data: StepData<T>, env: StepEnv): CommandBody<C>;
  commandOn?(state: S, data: StepData<T>): CommandBody<C> | null;
  outcomeFor(state: S, data: StepData<T>): TransferOutcome;
  refusable?: true;
}

/** An aggregate step, its command and state types inferred from its aggregate. */
export const aggregateStep = <T extends AggregateStepType, C extends Command, S, E extends DomainEvent>(
  _type: T,
  spec: { aggregate: Aggregate<C, S, E> } & Omit<AggregateStep<T, C, S>, 'aggregate'>,
): AggregateStep<T> => spec as unknown as AggregateStep<T>;

export type AggregateSteps = { readonly [T in AggregateStepType]?: AggregateStep<T> };

export interface Leg<K extends EndpointKind = EndpointKind> {
  kind: K;
  /** the step that makes this endpoint pay; absent: it never pays */
  debit?: Debit;
  /** the step that credits this endpoint; absent: it is never credited by a transfer */
  credit?: Credit;
  /** the step that gives this endpoint back what the destination rejected; absent: no destination rejects it */
  refund?: Refund;
  /**
   * As the destination: what it must hold before any money moves (a pool a follow opens for a beta
   * agent holds a seat claim), reserved before the debit (null: nothing to hold for this plan), and
   * the step that gives it back once the transfer ends (completed, compensated, failed, or stopped
   * by an error); that step keeps what the destination still holds or will (a pool open with the
   * claim, a debit waiting to open one).
   */
  reservation?: { reserve(plan: TransferPlan): TransferStep | null; release(plan: TransferPlan): TransferStep };
  /** the other end's steps, when this endpoint's money decides them (see above) */
  counterpart?: { debit?: Debit; credit?: Credit; refund?: Refund };
  /** a debit of nothing ends the transfer (a pool's close found nothing to pay out) */
  emptyDebitEnds?: true;
  /** the endpoint as one string: a retried debit must name the same destination as the recorded one */
  key(endpoint: EndpointOf<K>): string;
  /** the user whose money it moves */
  owner(endpoint: EndpointOf<K>): string;
  /** its steps that are one aggregate's decision (its own, and its counterpart's), by step type */
  steps: AggregateSteps;
  /** the facts its aggregate records, by event type */
  facts: Readonly<Record<string, FactReader>>;
}

/** A plan as a step's data. */
export const carry = (plan: TransferPlan) => ({ transfer: plan });

/** A fact naming its transfer by a field of the event's data. */
export const factById =
  (status: TransferProgress, field = 'transferId') =>
  (data: unknown): TransferFact => ({ status, transferId: (data as Record<string, string>)[field]! });

/** A plan's endpoint on one side, which must be of `kind` (a step of another kind's plan is a bug). */
export function endpointAt<K extends EndpointKind>(plan: TransferPlan, side: 'from' | 'to', kind: K): EndpointOf<K> {
  const endpoint = plan[side];
  invariant(endpoint.kind === kind, `transfer ${plan.transferId}: the ${side} endpoint is not a ${kind}`);
  return endpoint as EndpointOf<K>;
}
