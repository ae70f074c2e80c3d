import type { ReviewRecord } from '../../domain/agent/index.ts';
import type { Projector } from '../projector.ts';
import { reviewsMigrations } from './schema.ts';

const decisions = new Set(['AgentApproved', 'AgentRejected', 'AgentPromoted']);

/** The review history of each agent: one row per administrator decision. */
export const reviewsProjector: Projector = {
  name: 'reviews',
  migrations: reviewsMigrations,
  tables: ['agent_reviews'],
  async apply(client, event) {
    if (!event.streamName.startsWith('agent-') || !decisions.has(event.type)) return;
    const review = (event.data as { review: ReviewRecord }).review;
    await client.query(
      `INSERT INTO agent_reviews (id, agent_id, status, reviewed_at, notes, safety_score, commit_position, prepare_position)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
      [
        review.id,
        event.streamName.slice('agent-'.length),
        review.status,
        review.reviewedAt,
        review.notes,
        review.safetyScore ?? null,
        event.position.commit.toString(),
        event.position.prepare.toString(),
      ],
    );
  },
};
