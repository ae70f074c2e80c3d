// The fee account's commands (a developer's claim of its agent's creator fees): their data and results. No handler here.
import type { MicroUsd } from '../../domain/shared/money.ts';
import type { TransferStatus } from '../../domain/transfer/process.ts';

export interface ClaimFeesData {
  agentId: string;
  /** the caller: the agent's developer, whose real wallet is paid */
  developerId: string;
  /** absent: everything claimable */
  amountMicro?: MicroUsd;
  /** the agent's real pools (the dashboard's read model): the streams whose settled fees the account accrues */
  poolIds: string[];
  /** the claim's own id (from an Idempotency-Key): a repeat runs the same transfer; absent: a fresh one */
  moveId?: string;
}

export interface ClaimFeesResult {
  agentId: string;
  transferId: string;
  status: TransferStatus;
  claimedMicro: MicroUsd;
  /** the account after the claim */
  earnedMicro: MicroUsd;
  claimedTotalMicro: MicroUsd;
  claimableMicro: MicroUsd;
}

export interface FeeCommands {
  ClaimFees: { data: ClaimFeesData; result: ClaimFeesResult };
}
