// The transfer steps that are not one aggregate's decision alone (domain/transfer/steps.ts,
// `PortStepType`): a pool's credit, whose rejection reason is read from the pool's stream, and a
// trade's entry, at the venue's mark price. Each is
// idempotent by the transfer id and reports the fact its endpoint holds for the transfer. The other
// steps are data on the legs (domain/transfer/legs/), run by aggregate-step.ts.
import { poolDecider } from '../../domain/pool/decide.ts';
import type { PoolEvent } from '../../domain/pool/events.ts';
import { poolStream } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { DomainError, invariant, refuse } from '../../domain/shared/errors.ts';
import { endpointAt } from '../../domain/transfer/legs/leg.ts';
import { poolOn } from '../../domain/transfer/legs/pool.ts';
import type { TransferPlan } from '../../domain/transfer/plan.ts';
import type { TransferOutcome } from '../../domain/transfer/steps.ts';
import { requestOf } from '../../domain/trade/commands.ts';
import { tradeDecider } from '../../domain/trade/decide.ts';
import { markPriceOf } from '../market/mark-price.ts';
import type { Tools } from '../tools.ts';

type Step<T extends string, D> = Command<T, D>;

/** The destination takes the credit (pending at the venue in the real context), or records that it never will. */
export async function creditPool({ data }: Step<'CreditPool', { transfer: TransferPlan; resumed: boolean }>, tools: Tools): Promise<TransferOutcome> {
  const { transferId } = data.transfer;
  const { state, events } = await tools.execute(poolDecider, poolOn(data.transfer, 'to'), { type: 'CreditPool', data });
  switch (state.transfers.get(transferId)) {
    case 'pending':
      return { type: 'CreditPending' };
    case 'rejected':
      return { type: 'CreditRejected', reason: await rejectionOf(tools, poolOn(data.transfer, 'to'), transferId, events) };
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

// ---- trades: a pool pays a trade its margin; a trade that ended pays its pool back ----

/**
 * The trade opens with the margin (notional = margin × leverage) at the venue's mark, or records why it
 * cannot. The trade's stream is new but after a crash: its first decision skips the read (`likelyNew`).
 */
export async function openTradeEntry({ data }: Step<'OpenTradeEntry', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const { tradeId, poolId: pool, request } = endpointAt(transfer, 'to', 'trade');
  invariant(request, `transfer ${transfer.transferId}: the trade has no request`);
  const rejected = async (reason: string, message: string) => {
    const { state } = await tools.execute(tradeDecider, tradeId, { type: 'RejectTrade', data: { tradeId, reason, message } }, { likelyNew: true });
    return state.status === 'rejected' ? ({ type: 'CreditRejected', reason: state.reason } as const) : ({ type: 'Credited' } as const);
  };
  const markPrice = await markPriceOf(tools, request.token);
  if (markPrice === null) return rejected('NO_MARK_PRICE', `the venue has no price for ${request.token}`);
  try {
    const { state } = await tools.execute(
      tradeDecider,
      tradeId,
      {
        type: 'RequestTrade',
        data: { ...requestOf(request), tradeId, poolId: pool, notionalMicro: transfer.amountMicro * request.leverage, markPrice },
      },
      { likelyNew: true },
    );
    return state.status === 'rejected' ? { type: 'CreditRejected', reason: state.reason } : { type: 'Credited' };
  } catch (err) {
    if (err instanceof DomainError) return rejected(err.reason, err.message);
    throw err;
  }
}

/**
 * A group's compensation (domain/transfer/group.ts): the trade its member opened ends at once at the
 * venue's mark, as a signal's close would end it; the group then runs the trade's return transfer.
 * A trade that ended already (an earlier run, its own stop) is undone as it is. The group's own step,
 * no transfer's: the runner calls it directly (run.ts `runGroup`), it is not in the steps registry.
 */
export async function undoTrade({ data }: Step<'UndoTrade', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { tradeId } = endpointAt(data.transfer, 'to', 'trade');
  const { state } = await tools.load(tradeDecider, tradeId);
  if (state.status === 'none' || state.status === 'rejected')
    throw refuse('TRADE_NOT_FOUND', `transfer ${data.transfer.transferId}: no trade ${tradeId} to undo`);
  if (state.status === 'open' || state.status === 'pending') {
    const price = await markPriceOf(tools, state.token);
    if (price === null) throw refuse('VALIDATION_FAILED', `no mark price for ${state.token}`);
    await tools.execute(tradeDecider, tradeId, { type: 'ClosePosition', data: { closePercent: 100, price, reason: 'SIGNAL' } });
  }
  return { type: 'Refunded' };
}
