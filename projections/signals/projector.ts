// One row per signal of an agent (stream `signal-{agentId}.{signalKey}`): what arrived, how it was
// read and, once executed, its outcome and per-pool results (kept as the event has them: the pool
// ids stay in the database; the inbox shows anonymized followers, record.ts). The item's fields
// but the results are rendered here once (`record_json`).
import { signalEventSchema, signalEventTypes, type SignalExecuted } from '../../domain/signal/events.ts';
import { assertNever } from '../../domain/shared/decider.ts';
import type { Migration, PoolClient } from '../../infra/db.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import type { Projector } from '../projector.ts';
import { renderedSignalRecord, signalRecordSchema } from './record.ts';

const migrations: Migration[] = [
  {
    id: 'projections/signals/001-signal-inbox',
    // Newest first per agent (the time it arrived, then its global position), filtered by outcome
    // (NULL: not executed yet); the replay finds a signal by the sender's signalId.
    sql: `CREATE TABLE signal_inbox (
      agent_id text NOT NULL,
      signal_key text NOT NULL,
      signal_id text NOT NULL,
      signal_id_given boolean NOT NULL,
      source text NOT NULL,
      reply_to text,
      body jsonb,
      interpretation jsonb NOT NULL,
      rule_version text NOT NULL,
      outcome text,
      skip_reason text,
      results jsonb NOT NULL DEFAULT '[]'::jsonb,
      received_at timestamptz NOT NULL,
      executed_at timestamptz,
      received_commit bigint NOT NULL,
      received_prepare bigint NOT NULL,
      record_json text NOT NULL,
      PRIMARY KEY (agent_id, signal_key)
    );
    CREATE INDEX signal_inbox_agent ON signal_inbox (agent_id, received_at DESC, received_commit DESC, received_prepare DESC);
    CREATE INDEX signal_inbox_agent_outcome ON signal_inbox (agent_id, outcome, received_at DESC, received_commit DESC, received_prepare DESC);
    CREATE INDEX signal_inbox_signal_id ON signal_inbox (agent_id, signal_id);`,
  },
  {
    // The signal worker's sweep: signals received and never executed, oldest first.
    id: 'projections/signals/002-unexecuted',
    sql: `CREATE INDEX signal_inbox_unexecuted ON signal_inbox (received_at) WHERE outcome IS NULL;`,
  },
  {
    // Prices finer than a micro-USD: interpretations show prices as decimal text; rebuilt from the events (upcast).
    id: 'projections/signals/003-exact-prices',
    sql: `DELETE FROM signal_inbox;
    DELETE FROM projection_checkpoints WHERE name = 'signals';`,
  },
];

/** `signal-{agentId}.{signalKey}` → its agent and key (agent ids hold no dot). */
function signalOf(streamName: string): { agentId: string; signalKey: string } {
  const instance = streamName.slice('signal-'.length);
  const dot = instance.indexOf('.');
  return { agentId: instance.slice(0, dot), signalKey: instance.slice(dot + 1) };
}

/** The record with the outcome set, from the record rendered at arrival (everything else stays as rendered). */
const executedRecord = (recordJson: string, executed: SignalExecuted): string =>
  JSON.stringify(
    signalRecordSchema.parse({
      ...JSON.parse(recordJson),
      outcome: executed.outcome,
      skipReason: executed.skipReason ?? null,
      executedAt: executed.executedAt,
    }),
  );

async function apply(client: PoolClient, recorded: RecordedEvent): Promise<void> {
  if (!recorded.streamName.startsWith('signal-') || !signalEventTypes.has(recorded.type)) return;
  const event = signalEventSchema.parse({ type: recorded.type, data: recorded.data });
  const { agentId, signalKey } = signalOf(recorded.streamName);
  switch (event.type) {
    case 'SignalReceived': {
      const r = event.data;
      // Received once (the decider's rule): a repeat changes nothing.
      await client.query(
        `INSERT INTO signal_inbox (agent_id, signal_key, signal_id, signal_id_given, source, reply_to, body, interpretation, rule_version,
          received_at, received_commit, received_prepare, record_json)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (agent_id, signal_key) DO NOTHING`,
        [
          agentId,
          signalKey,
          r.signalId,
          r.signalIdGiven,
          r.source,
          r.replyTo ?? null,
          JSON.stringify(r.body ?? null),
          JSON.stringify(r.interpretation),
          r.interpretation.ruleVersion,
          r.receivedAt,
          recorded.position.commit.toString(),
          recorded.position.prepare.toString(),
          renderedSignalRecord(r, null),
        ],
      );
      return;
    }
    case 'SignalExecuted': {
      // Executed once: the first outcome stands, as in the domain's fold.
      const { rows } = await client.query<{ record_json: string }>(
        'SELECT record_json FROM signal_inbox WHERE agent_id = $1 AND signal_key = $2 AND outcome IS NULL',
        [agentId, signalKey],
      );
      if (!rows[0]) return;
      const x = event.data;
      await client.query(
        `UPDATE signal_inbox SET outcome = $3, skip_reason = $4, results = $5, executed_at = $6, record_json = $7
         WHERE agent_id = $1 AND signal_key = $2`,
        [agentId, signalKey, x.outcome, x.skipReason ?? null, JSON.stringify(x.results), x.executedAt, executedRecord(rows[0].record_json, x)],
      );
      return;
    }
    default:
      assertNever(event);
  }
}

export const signalsProjector: Projector = {
  name: 'signals',
  migrations,
  tables: ['signal_inbox'],
  apply,
};
