// Signals received and never executed (a crash between the record and the queue), for the signal
// worker's sweep.
import type { Pool } from '../../infra/db.ts';

export async function unexecutedSignals(db: Pool, before: Date, limit: number): Promise<Array<{ agentId: string; signalKey: string }>> {
  const { rows } = await db.query<{ agent_id: string; signal_key: string }>({
    name: 'unexecuted-signals',
    text: 'SELECT agent_id, signal_key FROM signal_inbox WHERE outcome IS NULL AND received_at < $1 ORDER BY received_at LIMIT $2',
    values: [before, limit],
  });
  return rows.map((r) => ({ agentId: r.agent_id, signalKey: r.signal_key }));
}
