// The steps of a manual buy or sell (domain/transfer/process.ts): the venue's swap, idempotent by
// the transfer id, and the wallet's record of it. A swap the venue did not answer is repeated by the
// next run of the step (the request's retry, the recovery worker) under the same id.
import type { Command } from '../../domain/shared/decider.ts';
import { DomainError, invariant, refuse } from '../../domain/shared/errors.ts';
import type { LotsEndpoint, TransferPlan } from '../../domain/transfer/plan.ts';
import type { TransferOutcome } from '../../domain/transfer/process.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import type { SwapDone } from '../../domain/wallet/manual.ts';
import { VenueUnavailableError } from '../../infra/venues/errors.ts';
import type { Swap, SwapRequest } from '../../infra/venues/port.ts';
import type { Tools } from '../tools.ts';

type Step<T extends string, D> = Command<T, D>;

function lotsEndpoint(transfer: TransferPlan, side: 'from' | 'to'): LotsEndpoint {
  const endpoint = transfer[side];
  invariant(endpoint.kind === 'lots', `transfer ${transfer.transferId}: the ${side} endpoint is not manual lots`);
  return endpoint;
}

/** How long a step waits for a PENDING swap to become final before leaving it to the recovery. */
const SWAP_POLL_MS = 50;

/** The venue's final answer for the swap; SERVICE_UNAVAILABLE when it cannot tell in time (the step runs again later). */
async function finalSwap(tools: Tools, request: SwapRequest): Promise<Swap> {
  try {
    let swap = await tools.deps.swaps.swap(request);
    while (swap.status === 'PENDING' && tools.deadlineClock.nowMs() + SWAP_POLL_MS < tools.deadline) {
      await new Promise((r) => setTimeout(r, SWAP_POLL_MS));
      swap = (await tools.deps.swaps.status(request.swapId)) ?? swap;
    }
    if (swap.status === 'PENDING') throw refuse('SERVICE_UNAVAILABLE', `swap ${request.swapId} is not final yet: it completes in the background`);
    return swap;
  } catch (err) {
    if (err instanceof VenueUnavailableError) {
      throw refuse('SERVICE_UNAVAILABLE', `the venue did not answer swap ${request.swapId}: it is retried in the background`);
    }
    throw err;
  }
}

const done = (swap: Swap): SwapDone => ({ txId: swap.txId!, price: swap.price!, units: swap.units, usdMicro: swap.usdMicro });

/** The venue's request for a sell (repeating it answers the swap made). */
function swapOfSell(transfer: TransferPlan): SwapRequest {
  const { userId, walletContext, mint, units } = lotsEndpoint(transfer, 'from');
  return { swapId: transfer.transferId, userId, walletContext, side: 'sell', mint, amount: units! };
}

/** A buy's credit: the swap with what the wallet paid; CONFIRMED opens the lot, FAILED is given back. */
export async function buyLot({ data }: Step<'BuyLot', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const { userId, walletContext, mint } = lotsEndpoint(transfer, 'to');
  const swap = await finalSwap(tools, { swapId: transfer.transferId, userId, walletContext, side: 'buy', mint, amount: transfer.amountMicro });
  if (swap.status === 'FAILED') return { type: 'CreditRejected', reason: swap.reason ?? 'SWAP_FAILED' };
  await tools.execute(walletDecider, userId, { type: 'OpenLot', data: { transferId: transfer.transferId, swap: done(swap) } });
  return { type: 'Credited' };
}

/**
 * A sell's debit: the wallet records the request (refusing it before any swap), then the swap;
 * Debited with what it fetched, or refused when the swap failed (the lots stay as they were).
 */
export async function sellLots({ data }: Step<'SellLots', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const { userId } = lotsEndpoint(transfer, 'from');
  const { transferId } = transfer;
  const requested = await tools.execute(walletDecider, userId, { type: 'RequestSell', data: { transfer } }).then(
    ({ state }) => state.manual.get(transferId)!,
    (err: unknown) => (err instanceof DomainError ? err : Promise.reject(err)),
  );
  if (requested instanceof DomainError) return { type: 'DebitRefused', error: requested };
  if (requested.status === 'done') return { type: 'Debited', amountMicro: requested.swap!.usdMicro };
  if (requested.status === 'failed')
    return { type: 'DebitRefused', error: refuse('SWAP_FAILED', `the venue failed the sell: ${requested.reason}`, { swapReason: requested.reason }) };
  const swap = await finalSwap(tools, swapOfSell(transfer));
  if (swap.status === 'FAILED') {
    const reason = swap.reason ?? 'SWAP_FAILED';
    await tools.execute(walletDecider, userId, { type: 'FailSell', data: { transferId, reason } });
    return { type: 'DebitRefused', error: refuse('SWAP_FAILED', `the venue failed the sell: ${reason}`, { swapReason: reason }) };
  }
  return { type: 'Debited', amountMicro: swap.usdMicro };
}

/** A sell's credit: the lots shrink oldest first and the proceeds come in, as the final swap says. */
export async function settleSell({ data }: Step<'SettleSell', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const { userId } = lotsEndpoint(transfer, 'from');
  const { state } = await tools.load(walletDecider, userId);
  if (state.manual.get(transfer.transferId)?.status === 'done') return { type: 'Credited' };
  const swap = await finalSwap(tools, { ...swapOfSell(transfer), swapId: transfer.transferId });
  if (swap.status !== 'CONFIRMED') throw refuse('TRANSFER_NOT_FOUND', `sell ${transfer.transferId} has no confirmed swap`);
  await tools.execute(walletDecider, userId, { type: 'SettleSell', data: { transferId: transfer.transferId, swap: done(swap) } });
  return { type: 'Credited' };
}

/** A withdrawal's credit: the chain transfer to the address; CONFIRMED is recorded, FAILED is given back. */
export async function sendOut({ data }: Step<'SendOut', { transfer: TransferPlan }>, tools: Tools): Promise<TransferOutcome> {
  const { transfer } = data;
  const to = transfer.to;
  invariant(to.kind === 'address', `transfer ${transfer.transferId}: the destination is not an address`);
  const { userId, walletContext, mint, destination } = to;
  const sent = await finalSwap(tools, {
    swapId: transfer.transferId,
    userId,
    walletContext,
    side: 'withdraw',
    mint,
    amount: transfer.amountMicro,
    destination,
  });
  if (sent.status === 'FAILED') return { type: 'CreditRejected', reason: sent.reason ?? 'WITHDRAWAL_FAILED' };
  await tools.execute(walletDecider, userId, { type: 'RecordWithdrawal', data: { transferId: transfer.transferId, txId: sent.txId! } });
  return { type: 'Credited' };
}
