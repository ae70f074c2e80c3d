// An agent's fee account (domain/fees): it pays its developer the creator's fees (DebitFees records
// the claim with the plan; the account decides the amount of a claim of everything). It is paid by
// its pools' settlements, never by a transfer, and no destination rejects a claim (a wallet).
import { feeAccountDecider } from '../../fees/decide.ts';
import { feeEventSchema } from '../../fees/events.ts';
import { endpointIdentity } from '../plan.ts';
import { aggregateStep, carry, endpointAt, type Leg } from './leg.ts';

const planOfClaim = (event: { type: string; data: unknown }) => {
  const parsed = feeEventSchema.parse(event);
  return parsed.type === 'FeesClaimed' ? parsed.data.transfer : null;
};

export const feesLeg: Leg<'fees'> = {
  kind: 'fees',
  debit: (plan) => ({ type: 'DebitFees', data: carry(plan) }),
  ...endpointIdentity.fees,
  steps: {
    // The claim the account recorded (a retry finds the first one), or its refusal.
    DebitFees: aggregateStep('DebitFees', {
      aggregate: feeAccountDecider,
      id: ({ transfer }) => endpointAt(transfer, 'from', 'fees').agentId,
      command: ({ transfer }) => ({ type: 'DebitFees' as const, data: { transfer } }),
      outcomeFor: (state, { transfer }) => ({ type: 'Debited', amountMicro: state.claims.get(transfer.transferId)!.amountMicro }),
      refusable: true,
    }),
  },
  facts: {
    FeesClaimed: {
      stream: 'fees-',
      plan: planOfClaim,
      read: (data) => ({ status: 'debited', transfer: planOfClaim({ type: 'FeesClaimed', data })! }),
    },
  },
};
