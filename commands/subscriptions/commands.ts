// The subscriptions area's commands (follow, add, withdraw, stop, pool facts, orphan seats): their data
// and results. No handler here.
import type { PoolCommand } from '../../domain/pool/decide.ts';
import type { AgentTerms } from '../../domain/pool/events.ts';
import type { PoolState } from '../../domain/pool/state.ts';
import type { CommandBody } from '../../domain/shared/decider.ts';
import type { MicroUsd } from '../../domain/shared/money.ts';
import type { TransferStatus } from '../../domain/transfer/process.ts';
import type { WalletContext } from '../../domain/wallet/events.ts';
import type { SubscribeInput } from './subscribe-input.ts';

export interface FollowAgentData {
  userId: string;
  input: SubscribeInput;
}

export interface FollowAgentResult {
  agentId: string;
  walletContext: WalletContext;
  /** the terms the pool keeps (its first follow's) */
  terms: AgentTerms;
  /** the pool did not exist when this request started */
  created: boolean;
  /** the pool after the follow: the answer's subscription record */
  pool: PoolState;
}

export interface ReleaseOrphanSeatData {
  agentId: string;
  userId: string;
  /** the caller's own claims, which it no longer uses: they go back unless a pool holds them or a debit waits with them */
  claims?: string[];
}

export interface PoolRequest {
  userId: string;
  agentId: string;
  /** absent: the user's current context */
  walletContext?: WalletContext;
  /**
   * the move's own id (an MCP confirmation's): its transfer id derives from it, so a repeat of the
   * move runs the same transfer and finds what it did; absent: a fresh one
   */
  moveId?: string;
}

export interface PoolMoveResult {
  agentId: string;
  walletContext: WalletContext;
  /** the pool after the command (unfollowed after a stop) */
  pool: PoolState;
  /** how far the transfer came: completed, pending (waiting for the venue), … */
  status: TransferStatus;
  /** what moved (a stop pays out what the pool held) */
  amountMicro: MicroUsd;
}

/**
 * A pool fact that moves no money between streams: trades opening, marked and closing (signals
 * send them; tests enter realized PnL this way), bridge progress and venue
 * observations (the reconciliation worker).
 */
export type PoolFact = Exclude<CommandBody<PoolCommand>, { type: 'FollowAgent' | 'CreditPool' | 'DebitPool' | 'SettleAllocation' }>;

/** The subscriptions area's commands: each one's data and result. */
export interface SubscriptionCommands {
  FollowAgent: { data: FollowAgentData; result: FollowAgentResult };
  ReleaseOrphanSeat: { data: ReleaseOrphanSeatData; result: { released: boolean } };
  AddAllocation: { data: PoolRequest & { amountMicro: MicroUsd }; result: PoolMoveResult };
  WithdrawAllocation: { data: PoolRequest & { amountMicro: MicroUsd }; result: PoolMoveResult };
  StopFollowing: { data: PoolRequest; result: PoolMoveResult };
  RecordPoolFact: { data: { poolId: string; fact: PoolFact }; result: { pool: PoolState } };
}
