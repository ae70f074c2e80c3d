// The event store's row decoding before array rows: pg's row objects and default
// parsers, the transaction id read as text, each field converted one by one. Frozen here as the
// reference the new decoding must equal (test/infra/eventstore/decoding.test.ts) and the
// "before" variant bench/global-read.ts measures against.
import type { RecordedEvent } from '../../infra/eventstore/port.ts';

/** The columns the reference decoding selects. */
export const REFERENCE_COLUMNS = 'position, transaction_id::text AS tx_text, stream_name, revision, event_id, event_type, data, metadata, created_at';

export interface ReferenceRow {
  position: string;
  tx_text: string;
  stream_name: string;
  revision: string;
  event_id: string;
  event_type: string;
  data: unknown;
  metadata: RecordedEvent['metadata'];
  created_at: Date;
}

export const referenceEvent = (row: ReferenceRow): RecordedEvent => ({
  id: row.event_id,
  streamName: row.stream_name,
  revision: BigInt(row.revision),
  position: { commit: BigInt(row.tx_text), prepare: BigInt(row.position) },
  type: row.event_type,
  data: row.data,
  metadata: row.metadata,
  createdAt: row.created_at,
});
