// A user's manual lots of one mint in one wallet context. A buy credits them (BuyLot: the swap at
// the venue with what the wallet paid opens the lot, a failed swap is rejected and refunded). A sell
// is their debit (SellLots records the request with the plan, holding the wallet's trade lock, and
// swaps; a failed swap ends it with the lots as they were); its settlement, the lots shrinking and
// the proceeds coming in, is one record (SettleSell), so the wallet's credit is this leg's
// `counterpart`.
import { walletEventSchema } from '../../wallet/events.ts';
import { endpointIdentity } from '../plan.ts';
import { carry, factById, type Leg } from './leg.ts';

const planOfSell = (event: { type: string; data: unknown }) => {
  const parsed = walletEventSchema.parse(event);
  return parsed.type === 'SellRequested' ? parsed.data.transfer : null;
};

export const lotsLeg: Leg<'lots'> = {
  kind: 'lots',
  debit: (plan) => ({ type: 'SellLots', data: carry(plan) }),
  credit: (plan) => ({ type: 'BuyLot', data: carry(plan) }),
  counterpart: { credit: (plan) => ({ type: 'SettleSell', data: carry(plan) }) },
  ...endpointIdentity.lots,
  steps: {},
  facts: {
    LotOpened: { stream: 'wallet-', read: factById('completed') },
    SellRequested: {
      stream: 'wallet-',
      plan: planOfSell,
      read: (data) => ({ status: 'debited', transfer: planOfSell({ type: 'SellRequested', data })! }),
    },
    LotsSold: { stream: 'wallet-', read: factById('completed') },
    SellFailed: { stream: 'wallet-', read: factById('failed') },
  },
};
