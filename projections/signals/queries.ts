import type { Interpretation } from '../../domain/signal/intent.ts';
import type { PoolResult, SignalOutcome } from '../../domain/signal/events.ts';
import type { Pool } from '../../infra/db.ts';
import { executionResultsOf, inboxItemJson, type InboxOutcome } from './record.ts';

export interface SignalInboxQuery {
  outcome?: InboxOutcome;
  page: number;
  limit: number;
}

const FILTER = `agent_id = $1 AND ($2::text IS NULL OR ($2 = 'pending' AND outcome IS NULL) OR outcome = $2)`;
const ORDER = 'received_at DESC, received_commit DESC, received_prepare DESC';

/**
 * One page of an agent's signal inbox, newest first, and how many signals match: the items' JSON
 * array, each item the record the projector rendered with its per-pool results, whose followers
 * are anonymized here with the master secret (config.JWT_SECRET). One round trip.
 */
export async function signalInboxJson(db: Pool, masterSecret: string, agentId: string, q: SignalInboxQuery): Promise<{ itemsJson: string; total: number }> {
  const { rows } = await db.query<{ total: number; records: string[] | null; results: PoolResult[][] | null }>({
    name: 'signal-inbox',
    text: `SELECT c.total, p.records, p.results
      FROM (SELECT count(*)::int AS total FROM signal_inbox WHERE ${FILTER}) c,
        (SELECT array_agg(record_json ORDER BY ${ORDER}) AS records, json_agg(results ORDER BY ${ORDER}) AS results
          FROM (SELECT record_json, results, received_at, received_commit, received_prepare FROM signal_inbox WHERE ${FILTER}
            ORDER BY ${ORDER} LIMIT $3 OFFSET $4) page) p`,
    values: [agentId, q.outcome ?? null, q.limit, (q.page - 1) * q.limit],
  });
  const { total, records, results } = rows[0]!;
  const ids = new Map<string, string>();
  const items = (records ?? []).map((record, i) => inboxItemJson(record, executionResultsOf(results![i]!, masterSecret, ids)));
  return { itemsJson: `[${items.join(',')}]`, total };
}

export interface StoredSignal {
  signalId: string;
  body: unknown;
  interpretation: Interpretation;
  ruleVersion: string;
  outcome: SignalOutcome | null;
}

/** An agent's signal by the sender's signalId (the platform's id when the sender gave none); null when it has none. */
export async function findSignal(db: Pool, agentId: string, signalId: string): Promise<StoredSignal | null> {
  const { rows } = await db.query<{ signal_id: string; body: unknown; interpretation: Interpretation; rule_version: string; outcome: SignalOutcome | null }>({
    name: 'signal-by-id',
    text: 'SELECT signal_id, body, interpretation, rule_version, outcome FROM signal_inbox WHERE agent_id = $1 AND signal_id = $2 LIMIT 1',
    values: [agentId, signalId],
  });
  const r = rows[0];
  return r ? { signalId: r.signal_id, body: r.body, interpretation: r.interpretation, ruleVersion: r.rule_version, outcome: r.outcome } : null;
}

/** Signals received before `before` and never executed (a crash between the record and the queue), for the signal worker's sweep. */
export async function unexecutedSignals(db: Pool, before: Date, limit: number): Promise<Array<{ agentId: string; signalKey: string }>> {
  const { rows } = await db.query<{ agent_id: string; signal_key: string }>({
    name: 'unexecuted-signals',
    text: 'SELECT agent_id, signal_key FROM signal_inbox WHERE outcome IS NULL AND received_at < $1 ORDER BY received_at LIMIT $2',
    values: [before, limit],
  });
  return rows.map((r) => ({ agentId: r.agent_id, signalKey: r.signal_key }));
}
