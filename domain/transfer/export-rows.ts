// The transfer journal as an export writes it (projections/exports): one row per transfer fact
// (facts.ts), whichever aggregate recorded it. A fact carries its amount and endpoints when it
// holds the plan (the source's debit) or a pending leg; a fact naming only the transfer id leaves
// them empty, and its transfer's debit row, with the same transferId, has them.
import type { ExportCell, ExportedEvent } from '../pool/export-rows.ts';
import type { TransferFact } from './facts.ts';
import { endpointKey, type Endpoint } from './plan.ts';
import { transferIdOf } from './facts.ts';

export const TRANSFER_COLUMNS = [
  'transferId',
  'status',
  'amountUsd',
  'from',
  'to',
  'streamName',
  'type',
  'eventId',
  'globalCommit',
  'globalPrepare',
  'time',
] as const;

export type TransferRow = Record<(typeof TRANSFER_COLUMNS)[number], ExportCell>;

/** The column holding micro-USD, written as exact decimal text by the export (as the ledger's, LEDGER_MICRO_COLUMNS). */
export const TRANSFER_MICRO_COLUMNS: ReadonlySet<(typeof TRANSFER_COLUMNS)[number]> = new Set(['amountUsd']);

const endpoint = (e: Endpoint | undefined): string | null => (e ? endpointKey(e) : null);

export function transferRowOf(fact: TransferFact, recorded: ExportedEvent & { streamName: string; type: string }): TransferRow {
  const plan = 'transfer' in fact ? fact.transfer : undefined;
  const amountMicro = plan?.amountMicro ?? fact.leg?.amountMicro;
  return {
    transferId: transferIdOf(fact),
    status: fact.status,
    amountUsd: amountMicro ?? null,
    from: endpoint(plan?.from),
    to: endpoint(plan?.to),
    streamName: recorded.streamName,
    type: recorded.type,
    eventId: recorded.id,
    globalCommit: recorded.position.commit,
    globalPrepare: recorded.position.prepare,
    time: recorded.time,
  };
}
