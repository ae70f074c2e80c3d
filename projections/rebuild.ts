import { inTransaction, type Pool } from '../infra/db.ts';
import { START, type EventStore, type Position } from '../infra/eventstore/port.ts';
import { lockKey, writeCheckpoints } from './checkpoints.ts';
import { applyAll, type Projector } from './projector.ts';

const READ_BATCH = 1000;

/**
 * Rebuilds one read model from the first event in a single transaction under the projector's
 * lock: readers keep the old model until the new one commits, and a running projector waits,
 * then resumes from the rebuilt checkpoint.
 */
export async function rebuild(store: EventStore, pool: Pool, projector: Projector, onProgress?: (applied: number) => void): Promise<number> {
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [lockKey(projector.name)]);
    // DELETE, not TRUNCATE: readers keep seeing the old rows (MVCC) until the rebuild commits.
    for (const table of projector.tables) await client.query(`DELETE FROM ${table}`);
    let position: Position = START;
    let applied = 0;
    for (;;) {
      const events = await store.readAll({ fromPosition: position, maxCount: READ_BATCH });
      await applyAll(projector, client, events);
      applied += events.length;
      if (events.length) position = events[events.length - 1]!.position;
      onProgress?.(applied);
      if (events.length < READ_BATCH) break;
    }
    if (position !== START) await writeCheckpoints(client, new Map([[projector.name, position]]));
    else await client.query('DELETE FROM projection_checkpoints WHERE name = $1', [projector.name]);
    return applied;
  });
}
