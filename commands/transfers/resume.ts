// Resuming a transfer: the recovery worker finishes (or compensates) one that a crash interrupted
// after its debit, and the settlement of a pending leg carries one on once the venue answered. The
// plan comes from the debit event on the source stream, never from a read model.
import { feeEventSchema } from '../../domain/fees/events.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolEventSchema } from '../../domain/pool/events.ts';
import { poolStream } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { poolEndpointOf, tradeReturnPlan, type TransferPlan } from '../../domain/transfer/plan.ts';
import { tradeEventSchema } from '../../domain/trade/events.ts';
import { resumed, type TransferStatus } from '../../domain/transfer/process.ts';
import { walletEventSchema } from '../../domain/wallet/events.ts';
import { walletStream } from '../../domain/wallet/state.ts';
import type { Tools } from '../tools.ts';
import { runTransfer } from './run.ts';
import type { ResumeTransferData, SettleTransferData } from './commands.ts';

/** The plan a debit event carries, if `event` is the debit of `transferId`. */
function planIn(event: { type: string; data: unknown }, transferId: string): TransferPlan | null {
  if (event.type === 'WalletDebited' || event.type === 'SellRequested') {
    const parsed = walletEventSchema.parse(event);
    if (parsed.type === 'WalletDebited' || parsed.type === 'SellRequested') return parsed.data.transfer.transferId === transferId ? parsed.data.transfer : null;
  }
  if (event.type === 'WithdrawalRequested' || event.type === 'TradeOpened') {
    const parsed = poolEventSchema.parse(event);
    if (parsed.type === 'WithdrawalRequested' || parsed.type === 'TradeOpened') {
      return parsed.data.transfer?.transferId === transferId ? parsed.data.transfer : null;
    }
  }
  if (event.type === 'FeesClaimed') {
    const parsed = feeEventSchema.parse(event);
    return parsed.type === 'FeesClaimed' && parsed.data.transfer.transferId === transferId ? parsed.data.transfer : null;
  }
  if (event.type === 'TradeSettled') {
    const parsed = tradeEventSchema.parse(event);
    return parsed.type === 'TradeSettled' && parsed.data.transferId === transferId ? tradeReturnPlan(parsed.data) : null;
  }
  return null;
}

/** The plan of `transferId` from the first of `streams` that recorded its debit. */
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
