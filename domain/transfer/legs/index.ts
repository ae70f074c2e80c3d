// The legs, one per endpoint kind (plan.ts): a new kind of endpoint adds its file and one line here.
import type { Endpoint } from '../plan.ts';
import { addressLeg } from './address.ts';
import { feesLeg } from './fees.ts';
import type { EndpointKind, Leg } from './leg.ts';
import { lotsLeg } from './lots.ts';
import { poolLeg } from './pool.ts';
import { tradeLeg } from './trade.ts';
import { walletLeg } from './wallet.ts';

export type { EndpointKind, FactReader, Leg, PendingLeg, TransferFact } from './leg.ts';

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
