// The transfers area's public commands (resume, settle): their data. The steps are not public
// commands (steps-registry.ts). No handler here.
import type { TransferStatus } from '../../domain/transfer/process.ts';
import type { MicroUsd } from '../../domain/shared/money.ts';

export interface ResumeTransferData {
  transferId: string;
  /** the stream that recorded the debit (and the plan): `wallet-…`, `pool-…`, `trade-…` or `fees-…` */
  sourceStream: string;
}

export interface SettleTransferData {
  poolId: string;
  transferId: string;
  outcome: 'confirmed' | 'failed';
  /** confirmed: what the venue moved (a reclaim may be less than asked) */
  amountMicro: MicroUsd;
  reason?: string;
}

/** The transfers area's commands: each one's data and result. */
export interface TransferCommands {
  ResumeTransfer: { data: ResumeTransferData; result: { status: TransferStatus } };
  SettleTransfer: { data: SettleTransferData; result: { status: TransferStatus } };
}
