// The simulated bridge between the chain and the perp venue's shared account. A deposit is
// BRIDGING from its start; a reclaim takes min(requested, the pool's free collateral) out of the
// account at once, or stays RECLAIM_DEFERRED when nothing is free until the caller starts it again.
// A BRIDGING transfer becomes final when the clock reaches its start + the direction's delay.
import type { PoolBook } from './book.ts';
import { VenueConflictError } from './errors.ts';
import type { BridgeRequest, BridgeTransfer } from './port.ts';
import { checkAmount, checkId, differences, simulatedHash } from './requests.ts';
import { SimulatedTransfers, type Due, type FailRule } from './settlements.ts';

export interface BridgeDelays {
  /** ms from start until a deposit is final */
  depositMs: number;
  /** ms from leaving the account until a reclaim is final */
  reclaimMs: number;
}

export class SimulatedBridge extends SimulatedTransfers<BridgeTransfer> {
  constructor(
    book: PoolBook,
    private readonly delays: BridgeDelays,
    fail: FailRule,
    transfers?: Map<string, BridgeTransfer>,
    waiting?: Due[],
  ) {
    super(book, fail, transfers, waiting);
  }

  start(request: BridgeRequest, now: number): BridgeTransfer {
    checkId('transferId', request.transferId);
    checkId('poolId', request.poolId);
    checkAmount('amountMicro', request.amountMicro);
    const existing = this.transfers.get(request.transferId);
    if (existing) {
      const fields = differences(existing, { ...request, requestedMicro: request.amountMicro }, ['direction', 'poolId', 'requestedMicro']);
      if (fields.length > 0) throw new VenueConflictError(request.transferId, fields);
      if (existing.status === 'RECLAIM_DEFERRED') this.tryReclaim(existing, now);
      return { ...existing };
    }
    const { transferId, direction, poolId, amountMicro } = request;
    const transfer: BridgeTransfer = {
      transferId,
      direction,
      poolId,
      requestedMicro: amountMicro,
      amountMicro: 0,
      status: 'RECLAIM_DEFERRED',
      bridgeTransactionId: null,
      reason: null,
    };
    this.transfers.set(transferId, transfer);
    if (direction === 'deposit') this.send(transfer, amountMicro, now + this.delays.depositMs);
    else this.tryReclaim(transfer, now);
    return { ...transfer };
  }

  /** A reclaim leaves with what is free now, or stays deferred while nothing is. */
  private tryReclaim(transfer: BridgeTransfer, now: number): void {
    const amount = Math.min(transfer.requestedMicro, this.book.freeOf(transfer.poolId));
    if (amount === 0) return;
    this.book.sendOut(transfer.poolId, amount);
    this.send(transfer, amount, now + this.delays.reclaimMs);
  }

  private send(transfer: BridgeTransfer, amount: number, finalAt: number): void {
    transfer.amountMicro = amount;
    transfer.status = 'BRIDGING';
    transfer.bridgeTransactionId = simulatedHash('bridge', transfer.transferId);
    this.pending.add(transfer.transferId, finalAt);
  }
}
