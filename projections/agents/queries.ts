import { z } from 'zod';
import {
  betaStatusSchema,
  channelSchema,
  signalDetectionRuleSchema,
  signalExecutionDefaultsSchema,
  venueSchema,
  type AgentListed,
  type ListedAgent,
  type BetaStatus,
  type Venue,
} from '../../domain/agent/index.ts';
import { microToUsd } from '../../domain/shared/money.ts';
import type { Pool } from '../../infra/db.ts';
import {
  noPerformance,
  performanceOf,
  PERFORMANCE_COLUMNS,
  tradingStats,
  tradingStatsOf,
  type AgentPerformance,
  type PerformanceColumns,
} from '../agent-figures/queries.ts';

/**
 * Fields every reader of an agent may see (GET /api/v1/agents). No developerId: user ids are an
 * unkeyed digest of the email, so a public id would let anyone confirm a developer's address.
 */
export const publicAgentRecord = z.object({
  id: z.string(),
  name: z.string(),
  betaStatus: betaStatusSchema,
  /** the beta seats taken, and the trading record of the agent's follower pools */
  performanceStats: tradingStats.extend({ betaSeatsTaken: z.number() }),
  createdAt: z.string(),
  updatedAt: z.string(),
  description: z.string().optional(),
  strategyDescription: z.string().optional(),
  avatarUrl: z.string().optional(),
  tags: z.array(z.string()),
  monthlyPrice: z.number(),
  successFeePercent: z.number(),
  betaStartDate: z.string().optional(),
  maxBetaUsers: z.number().optional(),
  membershipGated: z.boolean(),
  externalSignupUrl: z.string().optional(),
  venue: venueSchema,
  maxLeverage: z.number().optional(),
  minAllocationUsd: z.number(),
  minTradeUsd: z.number(),
  minPerTradePercent: z.number(),
  recommendedPerTradePercent: z.number(),
  maxConcurrentPositions: z.number(),
  maxEntriesPerTrade: z.number(),
});
export type PublicAgentRecord = z.infer<typeof publicAgentRecord>;

/** The developer agent record of the spec: the public fields plus the developer's own configuration. */
export const developerAgentRecord = publicAgentRecord.extend({
  developerId: z.string(),
  webhookUrl: z.string().optional(),
  inboundSignalsHttpUrl: z.string(),
  /** set only in the response that created the agent */
  inboundWebhookSigningSecretReveal: z.string().optional(),
  connectedChannels: z.array(channelSchema),
  signalDetectionRule: signalDetectionRuleSchema.optional(),
  signalExecutionDefaults: signalExecutionDefaultsSchema.optional(),
});
export type DeveloperAgentRecord = z.infer<typeof developerAgentRecord>;

type StoredRecord = Omit<AgentListed, 'agentId' | 'signingSecretCiphertext' | 'listedAt'>;

export interface AgentRow {
  id: string;
  developer_id: string;
  record: StoredRecord;
  beta_status: BetaStatus;
  beta_start_date: Date | null;
  beta_seats_taken: number;
  created_at: Date;
  updated_at: Date;
  /** from the agent-figures read model */
  performance: AgentPerformance;
}

// The agent's trading figures come from the agent-figures read model, joined by the agent's id.
const columns = `a.id, a.developer_id, a.record, a.beta_status, a.beta_start_date, a.beta_seats_taken, a.created_at, a.updated_at, ${PERFORMANCE_COLUMNS}`;
const source = 'agent_records a LEFT JOIN agent_performance p ON p.agent_id = a.id';

type AgentQueryRow = Omit<AgentRow, 'performance'> & PerformanceColumns;
const agentRow = ({ trades, winning_trades, realized_micro, contributed_micro, ...row }: AgentQueryRow): AgentRow => ({
  ...row,
  performance: performanceOf({ trades, winning_trades, realized_micro, contributed_micro }),
});

export function toPublicAgentRecord(row: AgentRow): PublicAgentRecord {
  const r = row.record;
  return {
    id: row.id,
    name: r.name,
    betaStatus: row.beta_status,
    performanceStats: { betaSeatsTaken: row.beta_seats_taken, ...tradingStatsOf(row.performance) },
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(r.description !== undefined ? { description: r.description } : {}),
    ...(r.strategyDescription !== undefined ? { strategyDescription: r.strategyDescription } : {}),
    ...(r.avatarUrl !== undefined ? { avatarUrl: r.avatarUrl } : {}),
    tags: r.tags,
    monthlyPrice: microToUsd(r.monthlyPriceMicroUsd),
    successFeePercent: r.successFeePercent,
    ...(row.beta_start_date ? { betaStartDate: row.beta_start_date.toISOString() } : {}),
    ...(r.maxBetaUsers !== undefined ? { maxBetaUsers: r.maxBetaUsers } : {}),
    membershipGated: r.membershipGated,
    ...(r.externalSignupUrl !== undefined ? { externalSignupUrl: r.externalSignupUrl } : {}),
    venue: r.venue,
    ...(r.maxLeverage !== undefined ? { maxLeverage: r.maxLeverage } : {}),
    minAllocationUsd: microToUsd(r.minAllocationMicroUsd),
    minTradeUsd: microToUsd(r.minTradeMicroUsd),
    minPerTradePercent: r.minPerTradePercent,
    recommendedPerTradePercent: r.recommendedPerTradePercent,
    maxConcurrentPositions: r.maxConcurrentPositions,
    maxEntriesPerTrade: r.maxEntriesPerTrade,
  };
}

/** `baseUrl` is where this deployment is reached: the signal URL is built from it at read time. */
export function toDeveloperAgentRecord(row: AgentRow, baseUrl: string): DeveloperAgentRecord {
  const r = row.record;
  return {
    ...toPublicAgentRecord(row),
    developerId: row.developer_id,
    ...(r.webhookUrl !== undefined ? { webhookUrl: r.webhookUrl } : {}),
    inboundSignalsHttpUrl: `${baseUrl}/api/v1/signals/${row.id}`,
    connectedChannels: r.connectedChannels,
    ...(r.signalDetectionRule !== undefined ? { signalDetectionRule: r.signalDetectionRule } : {}),
    ...(r.signalExecutionDefaults !== undefined ? { signalExecutionDefaults: r.signalExecutionDefaults } : {}),
  };
}

export async function getAgentRow(pool: Pool, agentId: string): Promise<AgentRow | null> {
  const { rows } = await pool.query<AgentQueryRow>(`SELECT ${columns} FROM ${source} WHERE a.id = $1`, [agentId]);
  return rows[0] ? agentRow(rows[0]) : null;
}

export interface Page {
  page: number;
  limit: number;
}

/** The caller's own agents, newest first. */
export async function listDeveloperAgents(pool: Pool, developerId: string, { page, limit }: Page) {
  const [rows, total] = await Promise.all([
    pool.query<AgentQueryRow>(
      `SELECT ${columns} FROM ${source} WHERE a.developer_id = $1
       ORDER BY a.created_at DESC, a.listed_commit DESC, a.listed_prepare DESC LIMIT $2 OFFSET $3`,
      [developerId, limit, (page - 1) * limit],
    ),
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_records WHERE developer_id = $1', [developerId]),
  ]);
  return { rows: rows.rows.map(agentRow), total: total.rows[0]!.n };
}

export interface FollowableFilter extends Page {
  venue?: Venue;
  betaStatus?: 'beta' | 'live';
}

/** Agents a user can follow (beta and live), newest first. */
export async function listFollowableAgents(pool: Pool, { page, limit, venue, betaStatus }: FollowableFilter) {
  const where = `a.beta_status IN ('beta', 'live') AND ($1::text IS NULL OR a.record->>'venue' = $1) AND ($2::text IS NULL OR a.beta_status = $2)`;
  const params = [venue ?? null, betaStatus ?? null];
  const [rows, total] = await Promise.all([
    pool.query<AgentQueryRow>(
      `SELECT ${columns} FROM ${source} WHERE ${where} ORDER BY a.created_at DESC, a.listed_commit DESC, a.listed_prepare DESC LIMIT $3 OFFSET $4`,
      [...params, limit, (page - 1) * limit],
    ),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM agent_records a WHERE ${where}`, params),
  ]);
  return { rows: rows.rows.map(agentRow), total: total.rows[0]!.n };
}

/** Ids of followable agents starting with `prefix`, in id order (the primary key's): for completions. */
export async function followableAgentIdsStartingWith(pool: Pool, prefix: string, limit: number): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM agent_records WHERE id >= $1 AND starts_with(id, $1) AND beta_status IN ('beta', 'live') ORDER BY id LIMIT $2`,
    [prefix, limit],
  );
  return rows.map((r) => r.id);
}

export async function getFollowableAgentRow(pool: Pool, agentId: string): Promise<AgentRow | null> {
  const row = await getAgentRow(pool, agentId);
  return row && (row.beta_status === 'beta' || row.beta_status === 'live') ? row : null;
}

/**
 * The row the projector builds, derived from the stream's state instead: a command's response is
 * shaped from the state it produced, so it never depends on how fast the read model catches up.
 * The seat count and the trading figures live in other streams: `readModel` gives them (none for
 * an agent just listed).
 */
export function agentRowOf(state: ListedAgent, readModel?: Pick<AgentRow, 'beta_seats_taken' | 'performance'> | null): AgentRow {
  const { exists: _e, id, betaStatus, betaStartDate, updatedAt, listedAt, signingSecretCiphertext: _s, ...record } = state;
  return {
    id,
    developer_id: record.developerId,
    record,
    beta_status: betaStatus,
    beta_start_date: betaStartDate ? new Date(betaStartDate) : null,
    beta_seats_taken: readModel?.beta_seats_taken ?? 0,
    created_at: new Date(listedAt),
    updated_at: new Date(updatedAt),
    performance: readModel?.performance ?? noPerformance,
  };
}
