import { assertNever } from '../shared/decider.ts';
import type { MicroUsd } from '../shared/money.ts';
import type { WalletContext } from '../wallet/events.ts';
import type { AgentTerms, FollowSettings, PoolEvent } from './events.ts';
import { emptyLedger, type LedgerInputs } from './ledger.ts';

/** One pool per user, agent and wallet context. */
export const poolId = (userId: string, agentId: string, walletContext: WalletContext): string =>
  `${userId}.${agentId}.${walletContext}`;
export const poolStream = (id: string): string => `pool-${id}`;

export interface FollowedPool {
  followed: true;
  poolId: string;
  agentId: string;
  userId: string;
  walletContext: WalletContext;
  settings: FollowSettings;
  terms: AgentTerms;
  subscribedAt: string;
  ledger: LedgerInputs;
  /** credited transfers by id: a repeated id credits nothing */
  transfers: Readonly<Record<string, MicroUsd>>;
  addCount: number;
}

export type PoolState = { followed: false } | FollowedPool;

export const initialState = (): PoolState => ({ followed: false });

export function evolve(state: PoolState, event: PoolEvent): PoolState {
  if (event.type === 'AgentFollowed') {
    const { poolId: id, agentId, userId, walletContext, terms, subscribedAt, walletMode: _alias, ...settings } = event.data;
    return {
      followed: true,
      poolId: id,
      agentId,
      userId,
      walletContext,
      settings,
      terms,
      subscribedAt,
      ledger: emptyLedger(),
      transfers: {},
      addCount: 0,
    };
  }
  if (!state.followed) return state;
  switch (event.type) {
    case 'FollowSettingsUpdated': {
      const { updatedAt: _at, ...settings } = event.data;
      return { ...state, settings };
    }
    case 'AllocationAdded': {
      const { transferId, amountMicro } = event.data;
      return {
        ...state,
        ledger: { ...state.ledger, confirmedIn: state.ledger.confirmedIn + amountMicro },
        transfers: { ...state.transfers, [transferId]: amountMicro },
        addCount: state.addCount + 1,
      };
    }
    default:
      return assertNever(event);
  }
}

export const poolFolder = { initialState, evolve };

/**
 * The id of the pool's next add. Derived from the pool's own history, not drawn at random, so a
 * request retried after a crash between the wallet debit and the pool credit finds the debit
 * already made under this id and credits it instead of debiting again.
 */
export const nextTransferId = (id: string, state: PoolState): string =>
  `${id}#add-${(state.followed ? state.addCount : 0) + 1}`;
