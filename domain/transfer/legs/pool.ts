// A user's pool of an agent: it pays a wallet context (withdraw, stop following: DebitPool, pending
// at the venue in the real context, Debited of 0 ends a close that found nothing) and takes a
// wallet's credit (CreditPool, pending at the venue in the real context, or rejected: a pool that
// is not open). Its margin for a trade is the trade leg's (trade.ts).
import { poolDecider } from '../../pool/decide.ts';
import { poolEventSchema } from '../../pool/events.ts';
import { payoutOutcome } from '../../pool/queries.ts';
import { poolId } from '../../pool/state.ts';
import { parseEvent } from '../../shared/parse-once.ts';
import { endpointIdentity, type TransferPlan } from '../plan.ts';
import { aggregateStep, carry, endpointAt, factById, type Leg } from './leg.ts';

/** The id of the pool on one side of a plan. */
export const poolOn = (plan: TransferPlan, side: 'from' | 'to'): string => {
  const { userId, agentId, walletContext } = endpointAt(plan, side, 'pool');
  return poolId(userId, agentId, walletContext);
};

const poolIdOf = (streamName: string) => streamName.slice('pool-'.length);

const planOfWithdrawal = (event: { type: string; data: unknown }) => {
  const parsed = parseEvent(poolEventSchema, event.type, event.data);
  return parsed.type === 'WithdrawalRequested' ? parsed.data.transfer : null;
};

export const poolLeg: Leg<'pool'> = {
  kind: 'pool',
  debit: (plan) => ({ type: 'DebitPool', data: carry(plan) }),
  credit: (plan, resumed) => ({ type: 'CreditPool', data: { transfer: plan, resumed } }),
  // A follow that opens a pool of a beta agent names a seat claim: the seat is taken before the
  // wallet pays (BETA_FULL refuses the transfer with nothing moved), and given back at the end
  // unless the pool opened with it or a debit still waits to open one.
  reservation: {
    reserve: (plan) => (endpointAt(plan, 'to', 'pool').follow?.seatClaim === undefined ? null : { type: 'TakeSeat', data: carry(plan) }),
    release: (plan) => ({ type: 'ReleaseSeat', data: carry(plan) }),
  },
  emptyDebitEnds: true,
  ...endpointIdentity.pool,
  steps: {
    // The payout: paid at once (virtual), pending at the venue (real), failed there, or refused.
    DebitPool: aggregateStep('DebitPool', {
      aggregate: poolDecider,
      id: ({ transfer }) => poolOn(transfer, 'from'),
      command: ({ transfer }) => ({ type: 'DebitPool' as const, data: { transfer } }),
      outcomeFor: (state, { transfer }) => payoutOutcome(state, transfer.transferId),
      refusable: true,
    }),
  },
  facts: {
    // The pool's payout (with the plan): paid out at once (virtual), or waiting for the venue.
    WithdrawalRequested: {
      stream: 'pool-',
      plan: planOfWithdrawal,
      read: (data, stream) => {
        const e = parseEvent(poolEventSchema, 'WithdrawalRequested', data);
        if (e.type !== 'WithdrawalRequested') throw new Error('unreachable');
        const { transfer, pending } = e.data;
        if (!pending) return { status: 'paid-out', transfer };
        return { status: 'pending', transfer, leg: { poolId: poolIdOf(stream), direction: 'out', amountMicro: transfer.amountMicro } };
      },
    },
    AllocationAdded: { stream: 'pool-', read: factById('completed') },
    AllocationPending: {
      stream: 'pool-',
      read: (data, stream) => {
        const { transferId, amountMicro } = data as { transferId: string; amountMicro: number };
        return { status: 'pending', transferId, leg: { poolId: poolIdOf(stream), direction: 'in', amountMicro } };
      },
    },
    // The venue's answer: an add confirmed is complete, failed is to be refunded; a payout confirmed
    // waits for the wallet's credit, failed moved nothing.
    AllocationSettled: {
      stream: 'pool-',
      read: (data) => {
        const e = parseEvent(poolEventSchema, 'AllocationSettled', data);
        if (e.type !== 'AllocationSettled') throw new Error('unreachable');
        const { transferId, direction, outcome } = e.data;
        const confirmed = outcome === 'confirmed';
        return { status: direction === 'in' ? (confirmed ? 'completed' : 'rejected') : confirmed ? 'paid-out' : 'failed', transferId };
      },
    },
    TransferRejected: { stream: 'pool-', read: factById('rejected') },
  },
};
