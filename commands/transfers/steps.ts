// The steps of a transfer, one command per endpoint role, each idempotent by the transfer id.
// Each reports the fact its endpoint holds for the transfer (domain/transfer/process.ts).
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolId } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { DomainError } from '../../domain/shared/errors.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import type { TransferPlan } from '../../domain/transfer/plan.ts';
import type { TransferOutcome } from '../../domain/transfer/process.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import type { Tools } from '../dispatch.ts';

/** The source pays: Debited with the amount it recorded (a retry finds the first one), or refused. */
export async function debitWallet({ data }: Command<'DebitWallet', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const virtualStartMicro = usdToMicro(tools.deps.config.VIRTUAL_START_USD);
  try {
    const { state } = await tools.execute(walletDecider, transfer.from.userId, { type: 'DebitWallet', data: { transfer, virtualStartMicro } });
    const paid = state.transfers[transfer.transferId]!;
    return paid.refunded ? { type: 'Refunded' } : { type: 'Debited', amountMicro: paid.amountMicro };
  } catch (err) {
    if (err instanceof DomainError) return { type: 'DebitRefused', error: err };
    throw err;
  }
}

/** The destination takes the credit, or records that it never will. */
export async function creditPool(
  { data }: Command<'CreditPool', { transfer: TransferPlan; resumed: boolean }>,
  tools: Tools,
): Promise<TransferOutcome> {
  const { to, transferId } = data.transfer;
  const { state, events } = await tools.execute(poolDecider, poolId(to.userId, to.agentId, to.walletContext), { type: 'CreditPool', data });
  if (state.transfers[transferId] !== 'rejected') return { type: 'Credited' };
  const rejected = events.find((e) => e.type === 'TransferRejected');
  return { type: 'CreditRejected', reason: rejected?.type === 'TransferRejected' ? rejected.data.reason : 'rejected earlier' };
}

/** The source takes back what the destination rejected. */
export async function refundWallet(
  { data }: Command<'RefundWallet', { userId: string; transferId: string }>,
  tools: Tools,
): Promise<TransferOutcome> {
  await tools.execute(walletDecider, data.userId, { type: 'RefundWallet', data: { transferId: data.transferId } });
  return { type: 'Refunded' };
}
