// Transfers waiting to become final, each with the time it does. The failure rule is asked once,
// when a transfer comes due, so a final status never changes afterwards.

/** A reason when the transfer must end FAILED, null to confirm it. */
export type FailRule = (transferId: string) => string | null;

interface Due {
  transferId: string;
  at: number;
  /** insertion order: ties on `at` settle in the order they were sent */
  seq: number;
}

export class Settlements {
  private waiting: Due[] = [];
  private seq = 0;

  constructor(private readonly fail: FailRule) {}

  add(transferId: string, at: number): void {
    this.waiting.push({ transferId, at, seq: this.seq++ });
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
