// An agent's fee account as its stream tells it: per pool, the creator fees accrued and claimed;
// per claim, what it took and where it went. Claimable is accrued minus claimed.
import { assertNever } from '../shared/decider.ts';
import type { MicroUsd } from '../shared/money.ts';
import { PersistentMap } from '../shared/persistent-map.ts';
import { endpointKey } from '../transfer/plan.ts';
import type { FeeEvent } from './events.ts';

export const feeAccountStream = (agentId: string): string => `fees-${agentId}`;

export interface PoolFees {
  /** the creator's share of every fee the pool settled, as far as the account has accrued it */
  earnedMicro: MicroUsd;
  claimedMicro: MicroUsd;
}

export interface FeeClaim {
  amountMicro: MicroUsd;
  /** the destination, as `endpointKey` writes it: a repeated id must name the same one */
  to: string;
}

export interface FeeAccountState {
  pools: PersistentMap<PoolFees>;
  /** pool ids in the order they first accrued: a claim takes the oldest fees first */
  order: readonly string[];
  claims: PersistentMap<FeeClaim>;
  earnedMicro: MicroUsd;
  claimedMicro: MicroUsd;
}

export const initialState = (): FeeAccountState => ({
  pools: PersistentMap.empty(),
  order: [],
  claims: PersistentMap.empty(),
  earnedMicro: 0,
  claimedMicro: 0,
});

export const claimableOf = (state: FeeAccountState): MicroUsd => state.earnedMicro - state.claimedMicro;

export function evolve(state: FeeAccountState, event: FeeEvent): FeeAccountState {
  switch (event.type) {
    case 'FeesAccrued': {
      const { poolId, creatorMicro } = event.data;
      const known = state.pools.get(poolId);
      return {
        ...state,
        pools: state.pools.set(poolId, { earnedMicro: (known?.earnedMicro ?? 0) + creatorMicro, claimedMicro: known?.claimedMicro ?? 0 }),
        order: known ? state.order : [...state.order, poolId],
        earnedMicro: state.earnedMicro + creatorMicro,
      };
    }
    case 'FeesClaimed': {
      const { transfer, parts } = event.data;
      let pools = state.pools;
      for (const { poolId, amountMicro } of parts) {
        const known = pools.get(poolId)!;
        pools = pools.set(poolId, { ...known, claimedMicro: known.claimedMicro + amountMicro });
      }
      const to = endpointKey(transfer.to);
      return {
        ...state,
        pools,
        claims: state.claims.set(transfer.transferId, { amountMicro: transfer.amountMicro, to }),
        claimedMicro: state.claimedMicro + transfer.amountMicro,
      };
    }
    default:
      return assertNever(event);
  }
}
