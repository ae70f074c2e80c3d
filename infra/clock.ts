// The clock port: the only place the service reads the time. Commands carry `metadata.now` taken
// from `Clock` (business time); tests give a clock of their own, often a fixed one. Deadlines,
// backoff, cache freshness and lag are read on the real time (`DeadlineClock`, `epochMs`), which a
// fixed business clock must not stop. Pure timers inside one process (a wait's time-out, a throttle)
// use `performance.now()`, which no one fixes and which never jumps.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** The real time in epoch milliseconds: deadlines, retries and lag against stored times, never business time. */
export const epochMs = (): number => Date.now();

/** The clock commands' deadlines are read on (commands/handle.ts): epoch milliseconds, so a deadline can cross processes. */
export interface DeadlineClock {
  nowMs(): number;
}

export const systemDeadlineClock: DeadlineClock = { nowMs: epochMs };
