import { assertNever } from '../shared/decider.ts';
import type { WalletContext } from '../wallet/events.ts';
import type { AgentTerms, FollowSettings, PoolEvent } from './events.ts';
import { emptyLedger, type LedgerInputs } from './ledger.ts';

/** One pool per user, agent and wallet context. */
export const poolId = (userId: string, agentId: string, walletContext: WalletContext): string =>
  `${userId}.${agentId}.${walletContext}`;
export const poolStream = (id: string): string => `pool-${id}`;

/** What the pool decided for a transfer credited to it: taken, or refused for good. */
export type TransferFate = 'credited' | 'rejected';
type Transfers = Readonly<Record<string, TransferFate>>;

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
  /** a repeated transferId credits nothing */
  transfers: Transfers;
}

export type PoolState = { followed: false; transfers: Transfers } | FollowedPool;

export const initialState = (): PoolState => ({ followed: false, transfers: {} });

export function evolve(state: PoolState, event: PoolEvent): PoolState {
  switch (event.type) {
    case 'AgentFollowed': {
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
        transfers: state.transfers,
      };
    }
    case 'TransferRejected':
      return { ...state, transfers: { ...state.transfers, [event.data.transferId]: 'rejected' } };
    case 'FollowSettingsUpdated': {
      if (!state.followed) return state;
      const { updatedAt: _at, ...settings } = event.data;
      return { ...state, settings };
    }
    case 'AllocationAdded': {
      if (!state.followed) return state;
      const { transferId, amountMicro } = event.data;
      return {
        ...state,
        ledger: { ...state.ledger, confirmedIn: state.ledger.confirmedIn + amountMicro },
        transfers: { ...state.transfers, [transferId]: 'credited' },
      };
    }
    default:
      return assertNever(event);
  }
}


/**
 * The id of the pool's next add: one more than the transfers the pool decided (credited or
 * rejected). Derived from the pool's own history, not drawn at random, so a request retried after
 * a crash between the wallet debit and the pool credit finds the debit already made under this id
 * and credits it instead of debiting again; after a rejection the next add gets a new id.
 */
export const nextTransferId = (id: string, state: PoolState): string => `${id}#add-${Object.keys(state.transfers).length + 1}`;
