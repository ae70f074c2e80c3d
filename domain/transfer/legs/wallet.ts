// A user's wallet context: it pays a pool (follow, add), a manual buy or a withdrawal to an address
// (DebitWallet records the debit with the plan), takes a credit (CreditWallet: a pool's payout, a
// fee claim; a wallet never rejects one) and takes back a credit its destination rejected
// (RefundWallet, saying why).
import { walletEventSchema } from '../../wallet/events.ts';
import { endpointIdentity } from '../plan.ts';
import { carry, factById, type Leg } from './leg.ts';

const planOfDebit = (event: { type: string; data: unknown }) => {
  const parsed = walletEventSchema.parse(event);
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
