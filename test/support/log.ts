import { comparePositions, type Position, type RecordedEvent } from '../../infra/eventstore/port.ts';
import type { TestApp } from './app.ts';

/**
 * The last event committed so far. The PostgreSQL store's global read shows a transaction's events
 * only once every older transaction has ended, in any database of the server (the snapshot's xmin
 * is the cluster's): another test file creating its database meanwhile holds the read back for a
 * moment. So on that store the tail is read from the events table itself, where every committed
 * event is; on EventStoreDB, the global read has it.
 */
export async function committedTail(app: Pick<TestApp, 'deps'>): Promise<Position | undefined> {
  if (app.deps.store.kind !== 'postgres') return (await readWhole(app)).at(-1)?.position;
  const { rows } = await app.deps.pool.query<{ commit: string; prepare: string }>(
    'SELECT transaction_id::text AS commit, position::text AS prepare FROM events ORDER BY transaction_id DESC, position DESC LIMIT 1',
  );
  const row = rows[0];
  return row ? { commit: BigInt(row.commit), prepare: BigInt(row.prepare) } : undefined;
}

/** The whole log the global read shows now, page by page. */
async function readWhole(app: Pick<TestApp, 'deps'>): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for (let from: Position | undefined; ; ) {
    const page = await app.deps.store.readAll({ ...(from ? { fromPosition: from } : {}), maxCount: 1_000 });
    events.push(...page);
    if (page.length < 1_000) return events;
    from = page.at(-1)!.position;
  }
}

/** Every event committed so far, by the global read, once it shows them all; throws past `timeoutMs`. */
export async function committedLog(app: Pick<TestApp, 'deps'>, { timeoutMs = 10_000 } = {}): Promise<RecordedEvent[]> {
  const tail = await committedTail(app);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await readWhole(app);
    const last = log.at(-1)?.position;
    if (!tail || (last && comparePositions(last, tail) >= 0)) return log;
    if (Date.now() > deadline) throw new Error(`the global read did not reach the committed tail in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
