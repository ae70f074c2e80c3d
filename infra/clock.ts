// The clock port: the only place the service reads the time. Commands carry `metadata.now` taken
// from it; tests give a clock of their own.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
