import type { Test } from 'tap';
import { firstFlow } from './steps/first.ts';
import { modesFlow } from './steps/modes.ts';
import { pricesFlow } from './steps/prices.ts';
import { signalFlow } from './steps/signal.ts';

/**
 * The end-to-end flows on one event store (each described in its own file under steps/): the
 * signal flow (steps/signal.ts), the trade modes and going live (steps/modes.ts), the first
 * flow (steps/first.ts, with the pool ledger of steps/ledger.ts) and prices across their range
 * (steps/prices.ts).
 */
export function flowSuite(t: Test, eventStore: 'postgres' | 'esdb') {
  // Each flow has its own app (database, Redis keys, SMTP server); the first one spends seconds
  // waiting for read-your-writes time-outs while its projectors are stopped: side by side on
  // PostgreSQL. On EventStoreDB one after the other: @eventstore/db-client keeps the pending batch
  // appends of every client of a process in one module-level map, and a batch stream that errors
  // (an app closing its client) rejects and clears them all, so a later answer to another client's
  // append finds no entry and throws out of a gRPC callback, ending the process (seen in CI).
  t.jobs = eventStore === 'esdb' ? 1 : 2;
  t.test(`the signal flow end to end on ${eventStore}`, (t) => signalFlow(t, eventStore));
  t.test(`the trade modes and going live end to end on ${eventStore}`, (t) => modesFlow(t, eventStore));
  t.test(`the first flow end to end on ${eventStore}`, (t) => firstFlow(t, eventStore));
  t.test(`prices from 0.00000001 to 100,000 USD end to end on ${eventStore}`, (t) => pricesFlow(t, eventStore));
}
