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
  // waiting for read-your-writes time-outs while its projectors are stopped: side by side.
  t.jobs = 2;
  t.test(`the signal flow end to end on ${eventStore}`, (t) => signalFlow(t, eventStore));
  t.test(`the trade modes and going live end to end on ${eventStore}`, (t) => modesFlow(t, eventStore));
  t.test(`the first flow end to end on ${eventStore}`, (t) => firstFlow(t, eventStore));
  t.test(`prices from 0.00000001 to 100,000 USD end to end on ${eventStore}`, (t) => pricesFlow(t, eventStore));
}
