import { z } from 'zod';
import { microToUsd, type MicroUsd } from '../../domain/shared/money.ts';
import { walletContextSchema } from '../../domain/wallet/context.ts';
import { anonymizedSubscriberId } from '../../infra/anonymize.ts';
import type { Pool } from '../../infra/db.ts';

export const pricingModelSchema = z.enum(['subscription', 'success_fee', 'free']);
export type PricingModel = z.infer<typeof pricingModelSchema>;

/**
 * The spec's subscriber item, plus the pool's wallet context (one follower may hold a virtual and a
 * real pool: same anonymized id, two items) and whether it is still followed. Never a user id.
 */
export const subscriberItem = z.object({
  anonymizedSubscriberId: z.string(),
  pricingModel: pricingModelSchema,
  subscribedAt: z.string(),
  claimableFeesUsd: z.number(),
  totalFeesEarnedUsd: z.number(),
  totalFeesClaimedUsd: z.number(),
  monthlyPrice: z.number(),
  successFeePercent: z.number(),
  walletContext: walletContextSchema,
  status: z.enum(['active', 'stopped']),
});
export type SubscriberItem = z.infer<typeof subscriberItem>;

/** `subscription` when a monthly price applies, `success_fee` when only a success fee does, else `free`. */
export function pricingModelOf(monthlyPriceMicro: MicroUsd, successFeePercent: number): PricingModel {
  if (monthlyPriceMicro > 0) return 'subscription';
  return successFeePercent > 0 ? 'success_fee' : 'free';
}

export interface SubscriberRow {
  user_id: string;
  wallet_context: 'virtual' | 'real';
  followed: boolean;
  subscribed_at: Date;
  success_fee_percent: number;
  /** bigint, as text */
  creator_fees_micro: string;
  creator_claimed_micro: string;
}

/**
 * One follower pool as its agent's developer sees it. The monthly price is the agent's (it cannot
 * change after listing, and the pool's terms do not snapshot it); the success fee is the one the
 * pool accepted. Claimable is what the pool earned the developer minus what their claims took of it.
 */
export function toSubscriberItem(row: SubscriberRow, agent: { id: string; monthlyPriceMicro: MicroUsd }, masterSecret: string): SubscriberItem {
  const earned = Number(row.creator_fees_micro);
  const claimed = Number(row.creator_claimed_micro);
  return {
    anonymizedSubscriberId: anonymizedSubscriberId(masterSecret, agent.id, row.user_id),
    pricingModel: pricingModelOf(agent.monthlyPriceMicro, row.success_fee_percent),
    subscribedAt: row.subscribed_at.toISOString(),
    claimableFeesUsd: microToUsd(earned - claimed),
    totalFeesEarnedUsd: microToUsd(earned),
    totalFeesClaimedUsd: microToUsd(claimed),
    monthlyPrice: microToUsd(agent.monthlyPriceMicro),
    successFeePercent: row.success_fee_percent,
    walletContext: row.wallet_context,
    status: row.followed ? 'active' : 'stopped',
  };
}

/** Every pool that ever followed the agent, in every wallet context, the latest opening first. */
export async function listSubscribers(pool: Pool, agentId: string, { page, limit }: { page: number; limit: number }) {
  const [rows, total] = await Promise.all([
    pool.query<SubscriberRow>(
      `SELECT user_id, wallet_context, followed, subscribed_at, success_fee_percent, creator_fees_micro, creator_claimed_micro FROM agent_subscribers
       WHERE agent_id = $1 ORDER BY subscribed_at DESC, followed_commit DESC, followed_prepare DESC LIMIT $2 OFFSET $3`,
      [agentId, limit, (page - 1) * limit],
    ),
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_subscribers WHERE agent_id = $1', [agentId]),
  ]);
  return { rows: rows.rows, total: total.rows[0]!.n };
}

/** What the agent's followers' pools did, summed (agent_performance; zeros before any pool event). */
export interface AgentPerformance {
  trades: number;
  winningTrades: number;
  realizedMicro: MicroUsd;
  contributedMicro: MicroUsd;
}

export const noPerformance: AgentPerformance = { trades: 0, winningTrades: 0, realizedMicro: 0, contributedMicro: 0 };

/** The columns of agent_performance as a reader joins them (`p`), zeros for an agent without a row. */
export const PERFORMANCE_COLUMNS = `COALESCE(p.trades, 0) AS trades, COALESCE(p.winning_trades, 0) AS winning_trades,
  COALESCE(p.realized_micro, 0) AS realized_micro, COALESCE(p.contributed_micro, 0) AS contributed_micro`;

export interface PerformanceColumns {
  trades: number;
  winning_trades: number;
  /** bigint, as text */
  realized_micro: string;
  contributed_micro: string;
}

export const performanceOf = (row: PerformanceColumns): AgentPerformance => ({
  trades: row.trades,
  winningTrades: row.winning_trades,
  realizedMicro: Number(row.realized_micro),
  contributedMicro: Number(row.contributed_micro),
});

export const tradingStats = z.object({
  /** trades closed in the agent's follower pools (every wallet context) */
  trades: z.number(),
  /** share of those closed with a positive realized PnL, 0..1 */
  winRate: z.number(),
  realizedPnlUsd: z.number(),
  /** realized PnL over the capital followers put into the agent's pools, in percent */
  returnPercent: z.number(),
});
export type TradingStats = z.infer<typeof tradingStats>;

/** winRate to 4 decimals (0.01 %), returnPercent to 2; both 0 before any trade or capital. */
export function tradingStatsOf({ trades, winningTrades, realizedMicro, contributedMicro }: AgentPerformance): TradingStats {
  return {
    trades,
    winRate: trades > 0 ? Math.round((winningTrades / trades) * 10_000) / 10_000 : 0,
    realizedPnlUsd: microToUsd(realizedMicro),
    returnPercent: contributedMicro > 0 ? Math.round((realizedMicro / contributedMicro) * 10_000) / 100 : 0,
  };
}

/**
 * The agent's real pools, which settle fees for its developer (virtual ones never do): the streams a
 * fee claim accrues from. Every real pool, not only those this model shows fees for: a pool is here
 * from its opening, long before it settles a fee, so a fee this model has not projected yet still
 * reaches the claim.
 */
export async function realPoolsOf(pool: Pool, agentId: string): Promise<string[]> {
  const { rows } = await pool.query<{ pool_id: string }>(
    "SELECT pool_id FROM agent_subscribers WHERE agent_id = $1 AND wallet_context = 'real' ORDER BY pool_id",
    [agentId],
  );
  return rows.map((r) => r.pool_id);
}
