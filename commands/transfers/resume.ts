// Resuming a transfer: the recovery worker finishes (or compensates) one that a crash interrupted
// after its debit, and the settlement of a pending leg carries one on once the venue answered. The
// plan comes from the debit event on the source stream, never from a read model.
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolStream } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { planIn } from '../../domain/transfer/facts.ts';
import { poolEndpointOf, type TransferPlan } from '../../domain/transfer/plan.ts';
import { resumed, type TransferStatus } from '../../domain/transfer/process.ts';
import { walletStream } from '../../domain/wallet/state.ts';
import type { Tools } from '../tools.ts';
import { runTransfer } from './run.ts';
import type { ResumeTransferData, SettleTransferData } from './commands.ts';

/** The plan of `transferId` from the first of `streams` that recorded its debit (the legs' debit events, domain/transfer/facts.ts). */
async function planOf(tools: Tools, transferId: string, streams: string[]): Promise<TransferPlan> {
  for (const stream of streams) {
    const recorded = await tools.deps.store.readStream(stream);
    const plan = recorded.map((e) => planIn(e, transferId)).find((p) => p !== null);
    if (plan) return plan;
  }
  throw refuse('TRANSFER_NOT_FOUND', `no transfer ${transferId} was debited by ${streams.join(' or ')}`);
}

export async function resumeTransfer({ data }: Command<'ResumeTransfer', ResumeTransferData>, tools: Tools): Promise<{ status: TransferStatus }> {
  const plan = await planOf(tools, data.transferId, [data.sourceStream]);
  return { status: (await runTransfer(tools, resumed(plan))).status };
}

/**
 * The venue answered for a pool's pending leg (the reconciliation worker sends this): the pool
 * records it, then the transfer goes on from its source: an add confirmed is complete, an add
 * failed is refunded to the wallet, a withdrawal confirmed is credited to the wallet, a withdrawal
 * failed stays in the pool.
 */
export async function settleTransfer({ data }: Command<'SettleTransfer', SettleTransferData>, tools: Tools): Promise<{ status: TransferStatus }> {
  const { poolId, transferId, outcome, amountMicro, reason } = data;
  await tools.execute(poolDecider, poolId, { type: 'SettleAllocation', data: { transferId, outcome, amountMicro, ...(reason ? { reason } : {}) } });
  // A withdrawal was debited by the pool itself, an add by the user's wallet.
  const plan = await planOf(tools, transferId, [poolStream(poolId), walletStream(poolEndpointOf(poolId).userId)]);
  return { status: (await runTransfer(tools, resumed(plan))).status };
}
