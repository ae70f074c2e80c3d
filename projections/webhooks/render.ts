// What a receiver is sent, from what the outbox stored: the followers the projector recorded by pool
// id (which holds the user id) become the id a developer sees for a follower everywhere
// (infra/anonymize.ts: `subscriberId`, keyed by the master secret, with the pool's `walletContext`),
// and a signal's per-pool results the inbox's `executionResults` (projections/signals/record.ts).
// Deterministic: every attempt of one event sends the same bytes.
import type { PoolResult } from '../../domain/signal/events.ts';
import { poolEndpointOf } from '../../domain/transfer/plan.ts';
import type { WebhookBody } from '../../domain/webhook/delivery.ts';
import { anonymizedSubscriberId } from '../../infra/anonymize.ts';
import { executionResultsOf } from '../signals/record.ts';

function followerOf(poolId: string, masterSecret: string) {
  const pool = poolEndpointOf(poolId);
  return { subscriberId: anonymizedSubscriberId(masterSecret, pool.agentId, pool.userId), walletContext: pool.walletContext };
}

/** The body as sent: no pool id (nor any user id) leaves. */
export function renderWebhookBody(stored: string, masterSecret: string): string {
  const body = JSON.parse(stored) as WebhookBody;
  const { poolId, results, parts, ...rest } = body.data as { poolId?: string; results?: PoolResult[]; parts?: Array<{ poolId: string; amountMicro: number }> };
  const data = {
    ...(poolId !== undefined ? followerOf(poolId, masterSecret) : {}),
    ...rest,
    ...(results !== undefined ? { executionResults: executionResultsOf(results, masterSecret) } : {}),
    ...(parts !== undefined ? { parts: parts.map((p) => ({ ...followerOf(p.poolId, masterSecret), amountMicro: p.amountMicro })) } : {}),
  };
  return JSON.stringify({ ...body, data });
}
