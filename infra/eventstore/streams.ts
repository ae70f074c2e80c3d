// The names of the streams that start with a prefix (the auditors' views list every pool stream).
// One statement on PostgreSQL; on EventStoreDB, which keeps no such index for us, one read of $all.
import type { Pool } from '../db.ts';
import { START, type EventStore, type Position } from './port.ts';

const ALL_BATCH = 1000;

/**
 * Every stream whose name starts with `prefix`, in no particular order. `db` is the database the
 * PostgreSQL store keeps its `events` table in (the read models' one, as createEventStore builds it).
 */
export async function streamNames(store: EventStore, db: Pool, prefix: string): Promise<string[]> {
  if (store.kind === 'postgres') {
    const { rows } = await db.query<{ stream_name: string }>('SELECT DISTINCT stream_name FROM events WHERE starts_with(stream_name, $1)', [prefix]);
    return rows.map((r) => r.stream_name);
  }
  const names = new Set<string>();
  for (let from: Position = START; ; ) {
    const batch = await store.readAll({ fromPosition: from, maxCount: ALL_BATCH });
    for (const event of batch) if (event.streamName.startsWith(prefix)) names.add(event.streamName);
    if (batch.length < ALL_BATCH) return [...names];
    from = batch.at(-1)!.position;
  }
}
