// The steps of a transfer, one command per endpoint role, each idempotent by the transfer id.
// Each reports the fact its endpoint holds for the transfer (domain/transfer/process.ts).
import { feeAccountDecider } from '../../domain/fees/decide.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import { payoutOutcome } from '../../domain/pool/queries.ts';
import type { PoolEvent } from '../../domain/pool/events.ts';
import { poolId, poolStream } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { DomainError, invariant, refuse } from '../../domain/shared/errors.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import { endpointKey, ownerOf, type PoolEndpoint, type TradeEndpoint, type TransferPlan } from '../../domain/transfer/plan.ts';
import { tradeDecider } from '../../domain/trade/decide.ts';
import { marginFor } from '../../domain/trade/maths.ts';
import { markPriceOf } from '../market/mark-price.ts';
import type { TransferOutcome } from '../../domain/transfer/process.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import type { Tools } from '../tools.ts';
import { requestOfStored } from '../../domain/trade/commands.ts';

type Step<T extends string, D> = Command<T, D>;

const poolIdOf = (e: PoolEndpoint) => poolId(e.userId, e.agentId, e.walletContext);

function poolEndpoint(transfer: TransferPlan, side: 'from' | 'to'): PoolEndpoint {
  const endpoint = transfer[side];
  invariant(endpoint.kind === 'pool', `transfer ${transfer.transferId}: the ${side} endpoint is not a pool`);
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

/** An agent's fee account pays its developer (a claim): Debited with the amount it recorded (a retry finds the first one), or refused. */
export async function debitFees({ data }: Step<'DebitFees', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  invariant(transfer.from.kind === 'fees', `transfer ${transfer.transferId}: the source is not a fee account`);
  try {
    const { state } = await tools.execute(feeAccountDecider, transfer.from.agentId, { type: 'DebitFees', data: { transfer } });
    return { type: 'Debited', amountMicro: state.claims.get(transfer.transferId)!.amountMicro };
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
export async function creditPool({ data }: Step<'CreditPool', { transfer: TransferPlan; resumed: boolean }>, tools: Tools): Promise<TransferOutcome> {
  const { transferId } = data.transfer;
  const { state, events } = await tools.execute(poolDecider, poolIdOf(poolEndpoint(data.transfer, 'to')), { type: 'CreditPool', data });
  switch (state.transfers.get(transferId)) {
    case 'pending':
      return { type: 'CreditPending' };
    case 'rejected':
      return { type: 'CreditRejected', reason: await rejectionOf(tools, poolIdOf(poolEndpoint(data.transfer, 'to')), transferId, events) };
    case 'failed':
      return { type: 'CreditRejected', reason: 'the venue did not confirm the add' };
    default:
      return { type: 'Credited' };
  }
}

/**
 * Why the pool rejected the credit: the rejection just decided, else the one it recorded earlier (a
 * repeated step reports the same reason, which the refund records and a follow reads to plan again).
 */
async function rejectionOf(tools: Tools, id: string, transferId: string, decided: PoolEvent[]): Promise<string> {
  const recorded = decided.length > 0 ? decided : ((await tools.deps.store.readStream(poolStream(id))) as unknown as PoolEvent[]);
  const rejected = recorded.find((e) => e.type === 'TransferRejected' && e.data.transferId === transferId);
  return rejected?.type === 'TransferRejected' ? rejected.data.reason : 'rejected earlier';
}

/** A wallet context takes what a pool paid out; once per transfer. */
export async function creditWallet({ data }: Step<'CreditWallet', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transferId, amountMicro, from, to } = data.transfer;
  invariant(to.kind === 'wallet', `transfer ${transferId}: the destination is not a wallet`);
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
  { data }: Step<'RefundWallet', { userId: string; transferId: string; reason?: string }>,
  tools: Tools,
): Promise<TransferOutcome> {
  const { transferId, reason } = data;
  await tools.execute(walletDecider, data.userId, { type: 'RefundWallet', data: { transferId, ...(reason ? { reason } : {}) } });
  return { type: 'Refunded' };
}

// ---- trades: a pool pays a trade its margin; a trade that ended pays its pool back ----

function tradeEndpoint(transfer: TransferPlan, side: 'from' | 'to'): TradeEndpoint {
  const endpoint = transfer[side];
  invariant(endpoint.kind === 'trade', `transfer ${transfer.transferId}: the ${side} endpoint is not a trade`);
  return endpoint;
}

/**
 * The pool's decision on the trade, taken for every trade of the signal together before their
 * transfers run (both or neither: commands/signals/execute.ts): open (or closed since) is the
 * margin it locked, refused is recorded for good.
 */
export async function lockMargin({ data }: Step<'LockMargin', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const { tradeId } = tradeEndpoint(transfer, 'to');
  const { state } = await tools.load(poolDecider, poolIdOf(poolEndpoint(transfer, 'from')));
  switch (state.trades.get(tradeId)) {
    case 'open':
    case 'closed':
      return { type: 'Debited', amountMicro: transfer.amountMicro };
    case 'refused':
      return { type: 'DebitRefused', error: refuse('TRADE_SKIPPED', `the pool refused trade ${tradeId}`) };
    default:
      throw refuse('TRANSFER_NOT_FOUND', `the pool has not decided trade ${tradeId}`);
  }
}

/** The trade opens with the margin (notional = margin × leverage) at the venue's mark, or records why it cannot. */
export async function openTradeEntry({ data }: Step<'OpenTradeEntry', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const { tradeId, poolId: pool, request } = tradeEndpoint(transfer, 'to');
  invariant(request, `transfer ${transfer.transferId}: the trade has no request`);
  const rejected = async (reason: string, message: string) => {
    const { state } = await tools.execute(tradeDecider, tradeId, { type: 'RejectTrade', data: { tradeId, reason, message } });
    return state.status === 'rejected' ? ({ type: 'CreditRejected', reason: state.reason } as const) : ({ type: 'Credited' } as const);
  };
  const markPrice = await markPriceOf(tools, request.token);
  if (markPrice === null) return rejected('NO_MARK_PRICE', `the venue has no price for ${request.token}`);
  try {
    const { state } = await tools.execute(tradeDecider, tradeId, {
      type: 'RequestTrade',
      data: { ...requestOfStored(request), tradeId, poolId: pool, notionalMicro: transfer.amountMicro * request.leverage, markPrice },
    });
    return state.status === 'rejected' ? { type: 'CreditRejected', reason: state.reason } : { type: 'Credited' };
  } catch (err) {
    if (err instanceof DomainError) return rejected(err.reason, err.message);
    throw err;
  }
}

/** The pool takes back the margin of a trade that could not open. */
export async function releaseMargin({ data }: Step<'ReleaseMargin', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const { tradeId } = tradeEndpoint(transfer, 'to');
  await tools.execute(poolDecider, poolIdOf(poolEndpoint(transfer, 'from')), {
    type: 'CloseTrade',
    data: { tradeId, realizedPnlMicro: 0, released: true, transferId: transfer.transferId },
  });
  return { type: 'Refunded' };
}

/** What the trade recorded it pays back when it ended: its margin and the PnL it realized. */
export async function debitTrade({ data }: Step<'DebitTrade', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const { tradeId } = tradeEndpoint(transfer, 'from');
  const { state } = await tools.load(tradeDecider, tradeId);
  if (state.status !== 'closed' && state.status !== 'cancelled' && state.status !== 'expired') {
    throw refuse('TRANSFER_NOT_FOUND', `trade ${tradeId} has not ended: it pays nothing back yet`);
  }
  return { type: 'Debited', amountMicro: marginFor(state.notionalMicro, state.leverage) + state.realizedPnlMicro };
}

/** The pool releases the trade's margin and realizes its PnL: what came back minus the margin it locked. */
export async function returnMargin({ data }: Step<'ReturnMargin', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const { tradeId } = tradeEndpoint(transfer, 'from');
  const id = poolIdOf(poolEndpoint(transfer, 'to'));
  const { state } = await tools.load(poolDecider, id);
  const open = state.followed ? state.openTrades[tradeId] : undefined;
  if (!open) return { type: 'Credited' }; // closed by an earlier run of this step
  await tools.execute(poolDecider, id, {
    type: 'CloseTrade',
    data: { tradeId, realizedPnlMicro: transfer.amountMicro - open.marginMicro, transferId: transfer.transferId },
  });
  return { type: 'Credited' };
}
