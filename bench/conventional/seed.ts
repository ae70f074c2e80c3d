// The conventional database gets the same agents, users and sessions as our app, with the same
// ids, so the same access tokens pass the same checks on both sides, and the same mark prices.
import type { CommandRoom } from '../../commands/handle.ts';
import { agentDecider, agentStream, SEAT_SHARDS, seatShardDecider, seatShardId } from '../../domain/agent/index.ts';
import { migrate, type Pool } from '../../infra/db.ts';
import { conventionalMigrations } from './schema.ts';

/** Copies rows table to table through JSON, whatever the columns (both sides share the DDL). */
async function copyRows(from: Pool, to: Pool, table: 'users' | 'user_sessions', where: string, ids: string[]) {
  const { rows } = await from.query(`SELECT * FROM ${table} WHERE ${where} = ANY($1::uuid[])`, [ids]);
  await to.query(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(null::${table}, $1::json)`, [JSON.stringify(rows)]);
}

export async function seedConventional(
  ours: { pool: Pool; dispatch: { room: CommandRoom } },
  conventional: Pool,
  ids: { userIds: string[]; agentIds: string[] },
): Promise<void> {
  await migrate(conventional, conventionalMigrations);
  await copyRows(ours.pool, conventional, 'users', 'id', ids.userIds);
  await copyRows(ours.pool, conventional, 'user_sessions', 'user_id', ids.userIds);
  // The simulated venue's mark prices, as an administrator set them on ours.
  const prices = await ours.pool.query('SELECT * FROM market_prices');
  await conventional.query('INSERT INTO market_prices SELECT * FROM json_populate_recordset(null::market_prices, $1::json)', [JSON.stringify(prices.rows)]);
  for (const id of ids.agentIds) {
    const { state: a } = await ours.dispatch.room.load(agentStream(id), agentDecider);
    if (!a.exists) throw new Error(`agent ${id} does not exist`);
    await conventional.query(
      `INSERT INTO agents (id, developer_id, name, avatar_url, venue, max_leverage, success_fee_percent, min_allocation_micro,
         min_trade_micro, min_per_trade_percent, recommended_per_trade_percent, max_concurrent_positions, max_entries_per_trade,
         beta_status, max_beta_users)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      [
        a.id,
        a.developerId,
        a.name,
        a.avatarUrl ?? null,
        a.venue,
        a.maxLeverage ?? null,
        a.successFeePercent,
        a.minAllocationMicroUsd,
        a.minTradeMicroUsd,
        a.minPerTradePercent,
        a.recommendedPerTradePercent,
        a.maxConcurrentPositions,
        a.maxEntriesPerTrade,
        a.betaStatus,
        a.maxBetaUsers ?? null,
      ],
    );
    const holders = await Promise.all(
      Array.from({ length: SEAT_SHARDS }, (_, k) => ours.dispatch.room.load(seatShardDecider.streamOf(seatShardId(id, k)), seatShardDecider)),
    );
    for (const userId of holders.flatMap((h) => h.state.holders)) {
      await conventional.query('INSERT INTO beta_seats (agent_id, user_id, taken_at) VALUES ($1, $2, now())', [a.id, userId]);
    }
  }
}
