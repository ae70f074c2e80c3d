// Transfers waiting to become final, each with the time it does. The failure rule is asked once,
// when a transfer comes due, so a final status never changes afterwards.
import type { PoolBook } from './book.ts';

/** A reason when the transfer must end FAILED, null to confirm it. */
export type FailRule = (transferId: string) => string | null;

export interface Due {
  transferId: string;
  at: number;
  /** insertion order: ties on `at` settle in the order they were sent */
  seq: number;
}

export class Settlements {
  private seq: number;

  constructor(
    private readonly fail: FailRule,
    /** what already waits (the stored books load the transfers due by the call's time) */
    private readonly waiting: Due[] = [],
  ) {
    this.seq = waiting.reduce((max, d) => Math.max(max, d.seq + 1), 0);
  }

  add(transferId: string, at: number): void {
    this.waiting.push({ transferId, at, seq: this.seq++ });
  }

  /** When the transfer becomes final, or null when it does not wait (final, or deferred). */
  dueAt(transferId: string): number | null {
    return this.waiting.find((d) => d.transferId === transferId)?.at ?? null;
  }

  /** Calls `settle` for each transfer due at `now` (at ≤ now), earliest first, and forgets it. */
  due(now: number, settle: (transferId: string, reason: string | null) => void): void {
    const ready = this.waiting.filter((d) => d.at <= now).sort((a, b) => a.at - b.at || a.seq - b.seq);
    for (const d of ready) {
      // One at a time: a failure rule that throws leaves the rest waiting, none half-applied.
      const reason = this.fail(d.transferId);
      this.waiting.splice(this.waiting.indexOf(d), 1);
      settle(d.transferId, reason);
    }
  }
}

/** What a simulated chain or bridge transfer holds that settling it reads and writes. */
interface SettlingTransfer {
  poolId: string;
  amountMicro: number;
  direction: string;
  status: string;
  reason: string | null;
}

/**
 * The transfers of one simulated chain or bridge, by id, and their settling: when one comes due it
 * is CONFIRMED or FAILED (by the failure rule) and the pool's book applies it (a deposit in, any
 * other direction out).
 */
export abstract class SimulatedTransfers<T extends SettlingTransfer> {
  protected readonly pending: Settlements;

  protected constructor(
    protected readonly book: PoolBook,
    fail: FailRule,
    /** by transfer id: every transfer in memory, or those a stored call loaded */
    readonly transfers = new Map<string, T>(),
    waiting: Due[] = [],
  ) {
    this.pending = new Settlements(fail, waiting);
  }

  dueAt(transferId: string): number | null {
    return this.pending.dueAt(transferId);
  }

  status(transferId: string): T | null {
    const transfer = this.transfers.get(transferId);
    return transfer ? { ...transfer } : null;
  }

  /** Applies every transfer that became final by `now`, in the order they became final. */
  settle(now: number): void {
    this.pending.due(now, (transferId, reason) => {
      const transfer = this.transfers.get(transferId)!;
      transfer.status = reason === null ? 'CONFIRMED' : 'FAILED';
      transfer.reason = reason;
      this.book.finish(transfer.poolId, transfer.amountMicro, transfer.direction === 'deposit' ? 'in' : 'out', reason === null);
    });
  }
}
