import type { Migration, PoolClient } from '../infra/db.ts';
import type { RecordedEvent } from '../infra/eventstore/port.ts';

/** One read model: its tables and how each event changes them, inside the runner's transaction. */
export interface Projector {
  name: string;
  migrations: Migration[];
  /** tables emptied by a rebuild */
  tables: string[];
  apply(client: PoolClient, event: RecordedEvent): Promise<void>;
  /** Optional: the same effect as applying each event in order, in fewer statements. */
  applyBatch?(client: PoolClient, events: RecordedEvent[]): Promise<void>;
}

export async function applyAll(projector: Projector, client: PoolClient, events: RecordedEvent[]): Promise<void> {
  if (events.length === 0) return;
  if (projector.applyBatch) return projector.applyBatch(client, events);
  for (const event of events) await projector.apply(client, event);
}
