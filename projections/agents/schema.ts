import type { Migration } from '../../infra/db.ts';

export const agentsMigrations: Migration[] = [
  {
    id: 'projections/agents/001-agent-records',
    // `listed_*` is the global position of the listing: it orders agents listed in the same millisecond.
    // `record` holds the listing as the developer gave it (money in micro-USD), never the secret.
    sql: `CREATE TABLE agent_records (
      id text PRIMARY KEY,
      developer_id text NOT NULL,
      record jsonb NOT NULL,
      beta_status text NOT NULL,
      beta_start_date timestamptz,
      beta_seats_taken integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      listed_commit bigint NOT NULL,
      listed_prepare bigint NOT NULL);
    CREATE INDEX agent_records_developer ON agent_records (developer_id, created_at DESC, listed_commit DESC, listed_prepare DESC);
    CREATE INDEX agent_records_followable ON agent_records (created_at DESC, listed_commit DESC, listed_prepare DESC)
      WHERE beta_status IN ('beta', 'live');`,
  },
];
