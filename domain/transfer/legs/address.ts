// A chain address outside the service: a withdrawal of the spend stablecoin from the real wallet
// context. It never pays; its credit is the chain transfer (SendOut), recorded by the wallet
// (WalletWithdrawn), or failed by the chain (rejected: the wallet is refunded).
import { endpointIdentity } from '../plan.ts';
import { carry, factById, type Leg } from './leg.ts';

export const addressLeg: Leg<'address'> = {
  kind: 'address',
  credit: (plan) => ({ type: 'SendOut', data: carry(plan) }),
  ...endpointIdentity.address,
  steps: {},
  facts: {
    WalletWithdrawn: { stream: 'wallet-', read: factById('completed') },
  },
};
