// The steps of a transfer, one command per endpoint role, each idempotent by the transfer id.
// Each reports the fact its endpoint holds for the transfer (domain/transfer/process.ts).
import { poolDecider } from '../../domain/pool/decide.ts';
import { payoutOutcome, poolId } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { DomainError, refuse } from '../../domain/shared/errors.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import { endpointKey, ownerOf, type PoolEndpoint, type TransferPlan } from '../../domain/transfer/plan.ts';
import type { TransferOutcome } from '../../domain/transfer/process.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import type { Tools } from '../dispatch.ts';

type Step<T extends string, D> = Command<T, D>;

const poolIdOf = (e: PoolEndpoint) => poolId(e.userId, e.agentId, e.walletContext);

function poolEndpoint(transfer: TransferPlan, side: 'from' | 'to'): PoolEndpoint {
  const endpoint = transfer[side];
  if (endpoint.kind !== 'pool') throw refuse('VALIDATION_FAILED', `transfer ${transfer.transferId}: the ${side} endpoint is not a pool`);
  return endpoint;
}

/** The source pays: Debited with the amount it recorded (a retry finds the first one), or refused. */
export async function debitWallet({ data }: Step<'DebitWallet', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const virtualStartMicro = usdToMicro(tools.deps.config.VIRTUAL_START_USD);
  try {
    const { state } = await tools.execute(walletDecider, ownerOf(transfer.from), { type: 'DebitWallet', data: { transfer, virtualStartMicro } });
    const paid = state.debits.get(transfer.transferId)!;
    return paid.refunded ? { type: 'Refunded' } : { type: 'Debited', amountMicro: paid.amountMicro };
  } catch (err) {
    if (err instanceof DomainError) return { type: 'DebitRefused', error: err };
    throw err;
  }
}


/** A pool pays (withdraw, stop following): Debited at once (virtual), pending at the venue (real), or refused. */
export async function debitPool({ data }: Step<'DebitPool', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  try {
    const { state } = await tools.execute(poolDecider, poolIdOf(poolEndpoint(transfer, 'from')), { type: 'DebitPool', data: { transfer } });
    return payoutOutcome(state, transfer.transferId);
  } catch (err) {
    if (err instanceof DomainError) return { type: 'DebitRefused', error: err };
    throw err;
  }
}

/** The destination takes the credit (pending at the venue in the real context), or records that it never will. */
export async function creditPool(
  { data }: Step<'CreditPool', { transfer: TransferPlan; resumed: boolean }>,
  tools: Tools,
): Promise<TransferOutcome> {
  const { transferId } = data.transfer;
  const { state, events } = await tools.execute(poolDecider, poolIdOf(poolEndpoint(data.transfer, 'to')), { type: 'CreditPool', data });
  switch (state.transfers.get(transferId)) {
    case 'pending':
      return { type: 'CreditPending' };
    case 'rejected': {
      const rejected = events.find((e) => e.type === 'TransferRejected');
      return { type: 'CreditRejected', reason: rejected?.type === 'TransferRejected' ? rejected.data.reason : 'rejected earlier' };
    }
    case 'failed':
      return { type: 'CreditRejected', reason: 'the venue did not confirm the add' };
    default:
      return { type: 'Credited' };
  }
}

/** A wallet context takes what a pool paid out; once per transfer. */
export async function creditWallet({ data }: Step<'CreditWallet', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transferId, amountMicro, from, to } = data.transfer;
  if (to.kind !== 'wallet') throw refuse('VALIDATION_FAILED', `transfer ${transferId}: the destination is not a wallet`);
  const source = endpointKey(from);
  const virtualStartMicro = usdToMicro(tools.deps.config.VIRTUAL_START_USD);
  await tools.execute(walletDecider, to.userId, {
    type: 'CreditWallet',
    data: { transferId, walletContext: to.walletContext, amountMicro, from: source, virtualStartMicro },
  });
  return { type: 'Credited' };
}

/** The source takes back what the destination rejected. */
export async function refundWallet(
  { data }: Step<'RefundWallet', { userId: string; transferId: string }>,
  tools: Tools,
): Promise<TransferOutcome> {
  await tools.execute(walletDecider, data.userId, { type: 'RefundWallet', data: { transferId: data.transferId } });
  return { type: 'Refunded' };
}
