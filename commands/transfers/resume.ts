// Resuming a transfer: the recovery worker finishes (or compensates) one that a crash interrupted
// after its debit, and the settlement of a pending leg carries one on once the venue answered. The
// plan comes from the debit event on the source stream, never from a read model.
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolStream } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { planIn, transferFactOf, transferIdOf } from '../../domain/transfer/facts.ts';
import { isFinished, statusOfProgress, transferProgress } from '../../domain/transfer/status.ts';
import { groupResumed } from '../../domain/transfer/group.ts';
import { marginGroupIn } from '../../domain/transfer/legs/trade.ts';
import { poolEndpointOf, type TransferPlan } from '../../domain/transfer/plan.ts';
import { resumed, type TransferStatus } from '../../domain/transfer/process.ts';
import { tradeStream } from '../../domain/trade/state.ts';
import { walletStream } from '../../domain/wallet/state.ts';
import type { Tools } from '../tools.ts';
import { runGroup, runTransfer } from './run.ts';
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
  if (plan.from.kind === 'pool' && plan.to.kind === 'trade') return resumeGroup(tools, plan.transferId, data.sourceStream);
  return { status: (await runTransfer(tools, resumed(plan))).status };
}

/**
 * A trade's margin is a member of its signal's group in the pool (both or neither): a member still
 * in flight resumes the whole group, so that a crash mid-group ends with every trade open or none
 * (domain/transfer/group.ts); the status answered is this member's own. A member finished on its
 * own records is left as it is (resumed alone, it changes nothing): the group keeps a member in
 * flight until it is over (its refunds come last), and that member's resume finishes it.
 */
async function resumeGroup(tools: Tools, transferId: string, poolStreamName: string): Promise<{ status: TransferStatus }> {
  const poolEvents = await tools.deps.store.readStream(poolStreamName);
  const plans = marginGroupIn(poolEvents, transferId);
  if (!plans) throw refuse('TRANSFER_NOT_FOUND', `no trade margin ${transferId} was debited by ${poolStreamName}`);
  const own = plans.find((p) => p.transferId === transferId)!;
  if (own.to.kind === 'trade') {
    const recorded = [...poolEvents, ...(await tools.deps.store.readStream(tradeStream(own.to.tradeId)))];
    const progress = recorded.flatMap((e) => {
      const fact = transferFactOf(e);
      return fact && transferIdOf(fact) === transferId ? [fact.status] : [];
    });
    const last = progress.sort((a, b) => transferProgress[b] - transferProgress[a])[0];
    if (last && isFinished(statusOfProgress(last))) return { status: (await runTransfer(tools, resumed(own))).status };
  }
  const group = await runGroup(tools, groupResumed(plans));
  const member = group.members.find((m) => m.transfer.plan.transferId === transferId)!;
  return { status: member.transfer.status === 'completed' && member.undo !== undefined ? 'compensated' : member.transfer.status };
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
