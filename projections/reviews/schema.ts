import type { Migration } from '../../infra/db.ts';

export const reviewsMigrations: Migration[] = [
  {
    id: 'projections/reviews/001-agent-reviews',
    // The event's global position orders decisions made within the same millisecond, the same way after a rebuild.
    sql: `CREATE TABLE agent_reviews (
      id text PRIMARY KEY,
      agent_id text NOT NULL,
      status text NOT NULL,
      reviewed_at timestamptz NOT NULL,
      notes text NOT NULL,
      safety_score integer,
      commit_position bigint NOT NULL,
      prepare_position bigint NOT NULL);
    CREATE INDEX agent_reviews_agent ON agent_reviews (agent_id, reviewed_at DESC, commit_position DESC, prepare_position DESC);`,
  },
];
