// The legs, one per endpoint kind (plan.ts): a new kind of endpoint adds its file and one line here.
import type { Endpoint } from '../plan.ts';
import type { AggregateStepType, StepType } from '../steps.ts';
import { addressLeg } from './address.ts';
import { feesLeg } from './fees.ts';
import type { AggregateStep, EndpointKind, Leg } from './leg.ts';
import { lotsLeg } from './lots.ts';
import { poolLeg } from './pool.ts';
import { tradeLeg } from './trade.ts';
import { walletLeg } from './wallet.ts';

export type { AggregateStep, EndpointKind, FactReader, Leg, PendingLeg, StepEnv, TransferFact } from './leg.ts';

export const legs: { readonly [K in EndpointKind]: Leg<K> } = {
  wallet: walletLeg,
  pool: poolLeg,
  trade: tradeLeg,
  lots: lotsLeg,
  address: addressLeg,
  fees: feesLeg,
};

/** The leg of an endpoint. */
export const legOf = (endpoint: Endpoint): Leg => legs[endpoint.kind] as Leg;

/**
 * The steps that are one aggregate's decision, from every leg, by step type: the generic executor
 * (commands/transfers/aggregate-step.ts) runs them. Every `AggregateStepType` has one, named by one
 * leg only (checked here, when the module loads).
 */
export const aggregateSteps: { readonly [T in AggregateStepType]: AggregateStep<T> } = (() => {
  const all: Partial<Record<StepType, unknown>> = {};
  for (const leg of Object.values(legs) as Leg[]) {
    for (const [type, step] of Object.entries(leg.steps)) {
      if (all[type as StepType]) throw new Error(`two legs describe the step ${type}`);
      all[type as StepType] = step;
    }
  }
  return all as { readonly [T in AggregateStepType]: AggregateStep<T> };
})();

/** A step's description when it is one aggregate's decision; null: it has a handler of its own (it needs the venue). */
export const aggregateStepOf = <T extends StepType>(type: T): AggregateStep | null =>
  Object.hasOwn(aggregateSteps, type) ? (aggregateSteps as Record<string, AggregateStep>)[type]! : null;
