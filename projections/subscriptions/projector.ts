// One row per (user, agent, wallet context): the follower's settings, the agent terms they
// followed under and the ledger inputs. The figures are not stored: queries compute them with
// the domain's ledger functions, so there is one copy of the maths.
import { assertNever } from '../../domain/shared/decider.ts';
import { poolEventSchema, poolEventTypes, type PoolEvent } from '../../domain/pool/events.ts';
import type { Migration, PoolClient } from '../../infra/db.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import type { Projector } from '../projector.ts';

const migrations: Migration[] = [
  {
    id: 'subscriptions/001-subscriptions',
    sql: `CREATE TABLE subscriptions (
      user_id text NOT NULL,
      agent_id text NOT NULL,
      wallet_context text NOT NULL,
      pool_id text NOT NULL UNIQUE,
      agent_name text NOT NULL,
      agent_image_url text,
      venue text NOT NULL,
      max_leverage double precision NOT NULL,
      success_fee_percent double precision NOT NULL,
      min_allocation_micro bigint NOT NULL,
      min_trade_micro bigint NOT NULL,
      min_per_trade_percent double precision NOT NULL,
      recommended_per_trade_percent double precision NOT NULL,
      max_concurrent_positions integer NOT NULL,
      max_entries_per_trade integer NOT NULL,
      trade_mode text NOT NULL,
      allocation_mode text NOT NULL,
      allocation_percentage_min double precision,
      allocation_percentage_max double precision,
      allocation_amount_usd_micro bigint,
      allocation_amount_sol_lamports bigint,
      go_live_upon_confirmation boolean NOT NULL,
      is_paused boolean NOT NULL,
      confirmed_in_micro bigint NOT NULL DEFAULT 0,
      confirmed_out_micro bigint NOT NULL DEFAULT 0,
      realized_micro bigint NOT NULL DEFAULT 0,
      unrealized_micro bigint NOT NULL DEFAULT 0,
      locked_micro bigint NOT NULL DEFAULT 0,
      pending_in_micro bigint NOT NULL DEFAULT 0,
      pending_out_micro bigint NOT NULL DEFAULT 0,
      fees_charged_micro bigint NOT NULL DEFAULT 0,
      bridge_status text,
      bridge_transaction_id text,
      reconciliation_status text,
      subscribed_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, agent_id, wallet_context)
    );
    CREATE INDEX subscriptions_agent ON subscriptions (agent_id, subscribed_at);`,
  },
];

/** The pool id is the stream name without its `pool-` prefix. */
const poolIdOf = (event: RecordedEvent): string => event.streamName.slice('pool-'.length);

function parse(event: RecordedEvent): PoolEvent | null {
  if (!event.streamName.startsWith('pool-') || !poolEventTypes.has(event.type)) return null;
  return poolEventSchema.parse({ type: event.type, data: event.data });
}

type SettingsUpdate = Extract<PoolEvent, { type: 'FollowSettingsUpdated' }>['data'];

/** The last settings of each pool, one statement for all of them. */
async function updateSettings(client: PoolClient, updates: Map<string, SettingsUpdate>) {
  if (updates.size === 0) return;
  const pools = [...updates.keys()];
  const all = [...updates.values()];
  await client.query(
    `UPDATE subscriptions s SET trade_mode = v.trade_mode, allocation_mode = v.allocation_mode,
       allocation_percentage_min = v.pmin, allocation_percentage_max = v.pmax, allocation_amount_usd_micro = v.usd,
       allocation_amount_sol_lamports = v.sol, go_live_upon_confirmation = v.go_live, is_paused = v.paused, updated_at = v.at
     FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::float8[], $6::bigint[], $7::bigint[], $8::boolean[],
                 $9::boolean[], $10::timestamptz[])
       AS v(pool_id, trade_mode, allocation_mode, pmin, pmax, usd, sol, go_live, paused, at)
     WHERE s.pool_id = v.pool_id`,
    [
      pools, all.map((e) => e.tradeMode), all.map((e) => e.allocationMode), all.map((e) => e.allocationPercentageMin),
      all.map((e) => e.allocationPercentageMax), all.map((e) => e.allocationAmountUsd), all.map((e) => e.allocationAmountSol),
      all.map((e) => e.goLiveUponConfirmation), all.map((e) => e.isPaused), all.map((e) => e.updatedAt),
    ],
  );
}

const FOLLOW_COLUMNS = 24;

/** All first follows of a batch in one multi-row INSERT. */
async function insertFollows(client: PoolClient, follows: Array<Extract<PoolEvent, { type: 'AgentFollowed' }>['data']>) {
  if (follows.length === 0) return;
  const rows: string[] = [];
  const values: unknown[] = [];
  for (const e of follows) {
    const t = e.terms;
    const at = values.length;
    rows.push(`(${Array.from({ length: FOLLOW_COLUMNS }, (_, i) => `$${at + i + 1}`).join(',')},$${at + 24},$${at + 24})`);
    values.push(
      e.userId, e.agentId, e.walletContext, e.poolId, t.agentName, t.agentImageUrl, t.venue, t.maxLeverage,
      t.successFeePercent, t.minAllocationUsd, t.minTradeUsd, t.minPerTradePercent, t.recommendedPerTradePercent,
      t.maxConcurrentPositions, t.maxEntriesPerTrade, e.tradeMode, e.allocationMode, e.allocationPercentageMin,
      e.allocationPercentageMax, e.allocationAmountUsd, e.allocationAmountSol, e.goLiveUponConfirmation,
      e.isPaused, e.subscribedAt,
    );
  }
  await client.query(
    `INSERT INTO subscriptions (user_id, agent_id, wallet_context, pool_id, agent_name, agent_image_url, venue, max_leverage,
       success_fee_percent, min_allocation_micro, min_trade_micro, min_per_trade_percent, recommended_per_trade_percent,
       max_concurrent_positions, max_entries_per_trade, trade_mode, allocation_mode, allocation_percentage_min,
       allocation_percentage_max, allocation_amount_usd_micro, allocation_amount_sol_lamports, go_live_upon_confirmation,
       is_paused, subscribed_at, created_at, updated_at)
     VALUES ${rows.join(',')}`,
    values,
  );
}

/**
 * A batch in a few statements. Per pool the events compose: the follow comes first (it creates
 * the row), the last settings update wins, allocations add up, and `updated_at` is the time of
 * the pool's last event after its follow. The result equals applying the events one by one
 * (test/projections/batch-equivalence.test.ts).
 */
async function applyBatch(client: PoolClient, events: RecordedEvent[]): Promise<void> {
  const follows: Array<Extract<PoolEvent, { type: 'AgentFollowed' }>['data']> = [];
  const settings = new Map<string, SettingsUpdate>();
  const added = new Map<string, bigint>();
  const lastTouch = new Map<string, string>();
  for (const recorded of events) {
    const event = parse(recorded);
    // A rejected transfer leaves the subscription as it was.
    if (!event || event.type === 'TransferRejected') continue;
    const poolId = poolIdOf(recorded);
    if (event.type !== 'AgentFollowed') {
      lastTouch.set(poolId, event.type === 'FollowSettingsUpdated' ? event.data.updatedAt : recorded.metadata.occurredAt);
    }
    switch (event.type) {
      case 'AgentFollowed':
        follows.push(event.data);
        break;
      case 'FollowSettingsUpdated':
        settings.set(poolId, event.data);
        break;
      case 'AllocationAdded':
        added.set(poolId, (added.get(poolId) ?? 0n) + BigInt(event.data.amountMicro));
        break;
      default:
        return assertNever(event);
    }
  }
  await insertFollows(client, follows);
  await updateSettings(client, settings);
  // Every pool with an allocation also has a last touch: one statement adds and stamps them all.
  if (lastTouch.size) {
    const pools = [...lastTouch.keys()];
    await client.query(
      `UPDATE subscriptions s SET confirmed_in_micro = s.confirmed_in_micro + v.amount, updated_at = v.at
       FROM unnest($1::text[], $2::bigint[], $3::timestamptz[]) AS v(pool_id, amount, at) WHERE s.pool_id = v.pool_id`,
      [pools, pools.map((p) => (added.get(p) ?? 0n).toString()), pools.map((p) => lastTouch.get(p))],
    );
  }
}

export const subscriptionsProjector: Projector = {
  name: 'subscriptions',
  migrations,
  tables: ['subscriptions'],
  applyBatch,
  async apply(client, recorded) {
    const event = parse(recorded);
    if (!event) return;
    const poolId = poolIdOf(recorded);
    switch (event.type) {
      case 'AgentFollowed':
        return insertFollows(client, [event.data]);
      case 'FollowSettingsUpdated':
        return updateSettings(client, new Map([[poolId, event.data]]));
      case 'AllocationAdded':
        await client.query(
          'UPDATE subscriptions SET confirmed_in_micro = confirmed_in_micro + $2, updated_at = $3 WHERE pool_id = $1',
          [poolId, event.data.amountMicro, recorded.metadata.occurredAt],
        );
        return;
      case 'TransferRejected':
        return;
      default:
        return assertNever(event);
    }
  },
};
