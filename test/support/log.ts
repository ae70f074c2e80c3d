import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import { comparePositions, type Position } from '../../infra/eventstore/port.ts';
import type { TestApp } from './app.ts';

/**
 * The last event committed so far. The PostgreSQL store's global read shows a transaction's events
 * only once every older transaction has ended, in any database of the server (the snapshot's xmin
 * is the cluster's): another test file creating its database meanwhile holds the read back for a
 * moment. So on that store the tail is read from the events table itself, where every committed
 * event is; on EventStoreDB, the global read has it.
 */
export async function committedTail(app: Pick<TestApp, 'deps'>): Promise<Position | undefined> {
  const { rows } = await app.deps.pool.query<{ store: string | null }>("SELECT to_regclass('events')::text AS store");
  if (rows[0]?.store == null) return (await app.deps.store.readAll({ maxCount: 1_000_000 })).at(-1)?.position;
  const tail = await app.deps.pool.query<{ commit: string; prepare: string }>(
    'SELECT transaction_id::text AS commit, position::text AS prepare FROM events ORDER BY transaction_id DESC, position DESC LIMIT 1',
  );
  const row = tail.rows[0];
  return row ? { commit: BigInt(row.commit), prepare: BigInt(row.prepare) } : undefined;
}

/** Every event committed so far, by the global read, once it shows them all (at most `timeoutMs`). */
export async function committedLog(app: Pick<TestApp, 'deps'>, { maxCount = 100_000, timeoutMs = 10_000 } = {}): Promise<RecordedEvent[]> {
  const tail = await committedTail(app);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await app.deps.store.readAll({ maxCount });
    const last = log.at(-1)?.position;
    if (!tail || (last && comparePositions(last, tail) >= 0) || Date.now() > deadline) return log;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
