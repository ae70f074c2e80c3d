// The books of one simulated venue account: per pool, the money it holds (confirmed deposits,
// realized PnL), what left it and is not final yet, and the margin its open positions lock.
// Synchronous on purpose: the simulated adapters call it between their awaits, so every venue
// operation is atomic, as a venue's own matching engine would make it.
import { VenueConflictError, VenueRefusedError } from './errors.ts';
import { checkAmount, checkId, differences } from './requests.ts';
import type { AccountFigures, MarginLock, MarginRequest, MicroUsd, PoolFigures, ReleaseRequest } from './port.ts';

export interface PoolEntry {
  /** confirmed in − sent out + realized PnL; margin in use is part of it */
  equity: MicroUsd;
  marginInUse: MicroUsd;
  outgoing: MicroUsd;
}

const free = (p: PoolEntry): MicroUsd => Math.max(0, p.equity - p.marginInUse);

export class PoolBook {
  constructor(
    /** by pool id: every pool of the account in memory, or the one pool a stored call touches */
    readonly pools = new Map<string, PoolEntry>(),
    /** by position id: every lock, or the one a stored call names */
    readonly locks = new Map<string, MarginLock>(),
  ) {}

  private pool(poolId: string): PoolEntry {
    let entry = this.pools.get(poolId);
    if (!entry) {
      entry = { equity: 0, marginInUse: 0, outgoing: 0 };
      this.pools.set(poolId, entry);
    }
    return entry;
  }

  figures(poolId: string): PoolFigures {
    const p = this.pools.get(poolId) ?? { equity: 0, marginInUse: 0, outgoing: 0 };
    return { poolId, equityMicro: p.equity, marginInUseMicro: p.marginInUse, freeMicro: free(p), outgoingMicro: p.outgoing };
  }

  totals(): AccountFigures {
    const sum: AccountFigures = { equityMicro: 0, marginInUseMicro: 0, freeMicro: 0, outgoingMicro: 0 };
    for (const p of this.pools.values()) {
      sum.equityMicro += p.equity;
      sum.marginInUseMicro += p.marginInUse;
      sum.freeMicro += free(p);
      sum.outgoingMicro += p.outgoing;
    }
    return sum;
  }

  freeOf(poolId: string): MicroUsd {
    const p = this.pools.get(poolId);
    return p ? free(p) : 0;
  }

  /** Money leaves the account (a withdrawal or reclaim is sent); the caller checked freeOf. */
  sendOut(poolId: string, amount: MicroUsd): void {
    const p = this.pool(poolId);
    p.equity -= amount;
    p.outgoing += amount;
  }

  /**
   * A transfer became final. In: a confirmed deposit arrives, a failed one never did. Out: what was
   * sent is gone when confirmed, back in the pool when it failed.
   */
  finish(poolId: string, amount: MicroUsd, way: 'in' | 'out', confirmed: boolean): void {
    const p = this.pool(poolId);
    if (way === 'in') {
      if (confirmed) p.equity += amount;
      return;
    }
    p.outgoing -= amount;
    if (!confirmed) p.equity += amount;
  }

  lock(request: MarginRequest): MarginLock {
    checkId('poolId', request.poolId);
    checkId('positionId', request.positionId);
    checkAmount('amountMicro', request.amountMicro);
    const existing = this.locks.get(request.positionId);
    if (existing) {
      const fields = differences(existing, request, ['poolId', 'amountMicro']);
      if (fields.length > 0) throw new VenueConflictError(request.positionId, fields);
      return { ...existing };
    }
    const p = this.pool(request.poolId);
    if (free(p) < request.amountMicro) {
      throw new VenueRefusedError('INSUFFICIENT_MARGIN', `pool ${request.poolId} has ${free(p)} micro-USD free, below the ${request.amountMicro} asked`, {
        freeMicro: free(p),
        requestedMicro: request.amountMicro,
      });
    }
    p.marginInUse += request.amountMicro;
    const lock: MarginLock = { positionId: request.positionId, poolId: request.poolId, amountMicro: request.amountMicro, status: 'LOCKED', pnlMicro: null };
    this.locks.set(lock.positionId, lock);
    return { ...lock };
  }

  release(request: ReleaseRequest): MarginLock {
    checkId('positionId', request.positionId);
    if (!Number.isSafeInteger(request.pnlMicro)) {
      throw new VenueRefusedError('INVALID_REQUEST', 'pnlMicro must be a safe integer of micro-USD', { pnlMicro: request.pnlMicro });
    }
    const lock = this.locks.get(request.positionId);
    if (!lock) throw new VenueRefusedError('UNKNOWN_POSITION', `no margin is locked under position ${request.positionId}`);
    if (lock.poolId !== request.poolId) throw new VenueConflictError(request.positionId, ['poolId']);
    if (lock.status === 'RELEASED') {
      if (lock.pnlMicro !== request.pnlMicro) throw new VenueConflictError(request.positionId, ['pnlMicro']);
      return { ...lock };
    }
    const p = this.pool(lock.poolId);
    p.marginInUse -= lock.amountMicro;
    // No liquidation in the simulation: a loss beyond the pool's equity leaves it negative, which
    // the reconciliation then reports as a gap.
    p.equity += request.pnlMicro;
    lock.status = 'RELEASED';
    lock.pnlMicro = request.pnlMicro;
    return { ...lock };
  }
}
