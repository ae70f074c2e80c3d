// The facts of a transfer, whichever aggregate records them, and the status each one moves it to:
// the legs' facts (legs/), joined. The one projector of transfers in flight (projections/transfers)
// reads them; the recovery (commands/transfers/resume.ts) reads a plan back from a debit event.
import { legs, type FactReader, type TransferFact } from './legs/index.ts';
import type { TransferPlan } from './plan.ts';

export { transferProgress, type TransferProgress } from './status.ts';
export type { PendingLeg, TransferFact } from './legs/index.ts';

const facts: ReadonlyMap<string, FactReader> = (() => {
  const all = new Map<string, FactReader>();
  for (const leg of Object.values(legs)) {
    for (const [type, reader] of Object.entries(leg.facts)) {
      if (all.has(type)) throw new Error(`two legs read ${type} as a transfer fact`);
      all.set(type, reader);
    }
  }
  return all;
})();

const readerOf = (event: { streamName: string; type: string }): FactReader | null => {
  const reader = facts.get(event.type);
  return reader && event.streamName.startsWith(reader.stream) ? reader : null;
};

/** The transfer fact an event records, or null for any other event. */
export function transferFactOf(event: { streamName: string; type: string; data: unknown }): TransferFact | null {
  return readerOf(event)?.read(event.data, event.streamName) ?? null;
}

/** The plan a debit event carries, if `event` is the debit of `transferId`. */
export function planIn(event: { streamName: string; type: string; data: unknown }, transferId: string): TransferPlan | null {
  const plan = readerOf(event)?.plan?.({ type: event.type, data: event.data }) ?? null;
  return plan?.transferId === transferId ? plan : null;
}

export const transferIdOf = (fact: TransferFact) => ('transfer' in fact ? fact.transfer.transferId : fact.transferId);
