// The simulated chain between users' wallets and the spot venue. A transfer is PENDING until the
// clock reaches its submit time + the settlement delay; then the failure rule decides, once, whether
// it is CONFIRMED or FAILED. Time only moves when the clock says so, so tests decide every outcome.
import type { PoolBook } from './book.ts';
import { VenueConflictError } from './errors.ts';
import type { ChainTransfer, ChainTransferRequest } from './port.ts';
import { checkAmount, checkId, differences, simulatedHash } from './requests.ts';
import { SimulatedTransfers, type Due, type FailRule } from './settlements.ts';

export class SimulatedChain extends SimulatedTransfers<ChainTransfer> {
  constructor(
    book: PoolBook,
    private readonly settlementMs: number,
    fail: FailRule,
    transfers?: Map<string, ChainTransfer>,
    waiting?: Due[],
  ) {
    super(book, fail, transfers, waiting);
  }

  submit(request: ChainTransferRequest, now: number): ChainTransfer {
    checkId('transferId', request.transferId);
    checkId('userId', request.userId);
    checkId('poolId', request.poolId);
    checkAmount('amountMicro', request.amountMicro);
    const existing = this.transfers.get(request.transferId);
    if (existing) {
      const fields = differences(existing, request, ['direction', 'userId', 'poolId', 'amountMicro']);
      if (fields.length > 0) throw new VenueConflictError(request.transferId, fields);
      return { ...existing };
    }
    const { transferId, direction, userId, poolId, amountMicro } = request;
    const transfer: ChainTransfer = { transferId, direction, userId, poolId, amountMicro, status: 'PENDING', txHash: null, reason: null };
    this.transfers.set(transferId, transfer);
    if (direction === 'withdrawal' && this.book.freeOf(poolId) < amountMicro) {
      // Never sent: a real chain would refuse the unfunded transaction. Final at once, so the
      // caller's flow handles it like any failed transfer (and a repeat answers the same).
      transfer.status = 'FAILED';
      transfer.reason = 'INSUFFICIENT_FUNDS';
      return { ...transfer };
    }
    if (direction === 'withdrawal') this.book.sendOut(poolId, amountMicro);
    transfer.txHash = simulatedHash('chain', transferId);
    this.pending.add(transferId, now + this.settlementMs);
    return { ...transfer };
  }
}
