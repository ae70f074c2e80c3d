import type { Migration, PoolClient } from '../infra/db.ts';
import type { RecordedEvent } from '../infra/eventstore/port.ts';

/**
 * What a projector may keep between one runner's batches (the states it wrote, so a batch need not read them back). The runner
 * hands it over only while the stored checkpoint is the one its own last batch wrote (no other process, catch-up or rebuild
 * wrote in between) and empties it otherwise, and after a batch that did not commit. A projector bounds what it keeps.
 */
export type BatchMemory = Map<string, unknown>;

/** One read model: its tables and how each event changes them, inside the runner's transaction. */
export interface Projector {
  name: string;
  migrations: Migration[];
  /** tables emptied by a rebuild */
  tables: string[];
  apply(client: PoolClient, event: RecordedEvent): Promise<void>;
  /** Optional: the same effect as applying each event in order, in fewer statements; `memory` as BatchMemory says, when the caller keeps one. */
  applyBatch?(client: PoolClient, events: RecordedEvent[], memory?: BatchMemory): Promise<void>;
}

export async function applyAll(projector: Projector, client: PoolClient, events: RecordedEvent[], memory?: BatchMemory): Promise<void> {
  if (events.length === 0) return;
  if (projector.applyBatch) return projector.applyBatch(client, events, memory);
  for (const event of events) await projector.apply(client, event);
}
