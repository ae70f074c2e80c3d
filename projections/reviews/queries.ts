import { z } from 'zod';
import { reviewDecisionSchema, type ReviewDecision } from '../../domain/agent/index.ts';
import type { Pool } from '../../infra/db.ts';

/** Review item of the spec. */
export const reviewItem = z.object({
  id: z.string(),
  status: reviewDecisionSchema,
  reviewedAt: z.string(),
  notes: z.string(),
  safetyScore: z.number().optional(),
});
export type ReviewItem = z.infer<typeof reviewItem>;

interface ReviewRow {
  id: string;
  status: ReviewDecision;
  reviewed_at: Date;
  notes: string;
  safety_score: number | null;
}

const toItem = (r: ReviewRow): ReviewItem => ({
  id: r.id,
  status: r.status,
  reviewedAt: r.reviewed_at.toISOString(),
  notes: r.notes,
  ...(r.safety_score !== null ? { safetyScore: r.safety_score } : {}),
});

/** An agent's review decisions, newest first. */
export async function listReviews(pool: Pool, agentId: string, { page, limit }: { page: number; limit: number }) {
  const [rows, total] = await Promise.all([
    pool.query<ReviewRow>(
      `SELECT id, status, reviewed_at, notes, safety_score FROM agent_reviews WHERE agent_id = $1
       ORDER BY reviewed_at DESC, commit_position DESC, prepare_position DESC LIMIT $2 OFFSET $3`,
      [agentId, limit, (page - 1) * limit],
    ),
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_reviews WHERE agent_id = $1', [agentId]),
  ]);
  return { items: rows.rows.map(toItem), total: total.rows[0]!.n };
}
