// A user's wallet context: it pays a pool (follow, add), a manual buy or a withdrawal to an address
// (DebitWallet records the debit with the plan), takes a credit (CreditWallet: a pool's payout, a
// fee claim; a wallet never rejects one) and takes back a credit its destination rejected
// (RefundWallet, saying why).
import { walletDecider } from '../../wallet/decide.ts';
import { parseEvent } from '../../shared/parse-once.ts';
import { walletEventSchema } from '../../wallet/events.ts';
import { endpointIdentity, endpointKey } from '../plan.ts';
import { aggregateStep, carry, endpointAt, factById, type Leg } from './leg.ts';

const planOfDebit = (event: { type: string; data: unknown }) => {
  const parsed = parseEvent(walletEventSchema, event.type, event.data);
  return parsed.type === 'WalletDebited' ? parsed.data.transfer : null;
};

export const walletLeg: Leg<'wallet'> = {
  kind: 'wallet',
  debit: (plan) => ({ type: 'DebitWallet', data: carry(plan) }),
  credit: (plan) => ({ type: 'CreditWallet', data: carry(plan) }),
  refund: (plan, reason) => {
    if (plan.from.kind !== 'wallet') throw new Error(`transfer ${plan.transferId}: a wallet refunds only what it paid`);
    return { type: 'RefundWallet', data: { userId: plan.from.userId, transferId: plan.transferId, ...(reason ? { reason } : {}) } };
  },
  ...endpointIdentity.wallet,
  steps: {
    // The debit: what the wallet recorded for the transfer (a retry finds the first one, or its refund).
    DebitWallet: aggregateStep('DebitWallet', {
      aggregate: walletDecider,
      id: ({ transfer }) => endpointAt(transfer, 'from', 'wallet').userId,
      command: ({ transfer }, { virtualStartMicro }) => ({ type: 'DebitWallet' as const, data: { transfer, virtualStartMicro } }),
      outcomeFor: (state, { transfer }) => {
        const paid = state.debits.get(transfer.transferId)!;
        return paid.refunded ? { type: 'Refunded' } : { type: 'Debited', amountMicro: paid.amountMicro };
      },
      refusable: true,
    }),
    // The credit: once per transfer, naming its source.
    CreditWallet: aggregateStep('CreditWallet', {
      aggregate: walletDecider,
      id: ({ transfer }) => endpointAt(transfer, 'to', 'wallet').userId,
      command: ({ transfer: { transferId, amountMicro, from, to } }, { virtualStartMicro }) => ({
        type: 'CreditWallet' as const,
        data: {
          transferId,
          walletContext: endpointAt({ transferId, amountMicro, from, to }, 'to', 'wallet').walletContext,
          amountMicro,
          from: endpointKey(from),
          virtualStartMicro,
        },
      }),
      outcomeFor: () => ({ type: 'Credited' }),
    }),
    RefundWallet: aggregateStep('RefundWallet', {
      aggregate: walletDecider,
      id: ({ userId }) => userId,
      command: ({ transferId, reason }) => ({ type: 'RefundWallet' as const, data: { transferId, ...(reason ? { reason } : {}) } }),
      outcomeFor: () => ({ type: 'Refunded' }),
    }),
  },
  facts: {
    WalletDebited: {
      stream: 'wallet-',
      plan: planOfDebit,
      read: (data) => ({ status: 'debited', transfer: planOfDebit({ type: 'WalletDebited', data })! }),
    },
    WalletRefunded: { stream: 'wallet-', read: factById('compensated') },
    WalletCredited: { stream: 'wallet-', read: factById('completed') },
  },
};
