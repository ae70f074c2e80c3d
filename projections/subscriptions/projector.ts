// One row per (user, agent, wallet context): the follower's settings, the agent terms they
// followed under and the ledger inputs. The row is the domain's own pool state, folded with the
// domain's `evolve` (domain/pool/state.ts) and kept in `subscription_states` (the projector's own
// table, so the list query's rows stay narrow); the row's columns are that state laid out
// for the list query, plus the record the list answers, rendered from that state with the domain's
// ledger functions (record.ts). The maths exists once, and the row can only differ from a replay
// of the stream if an event was missed or applied twice (what the auditors' replay checks, the
// rendered record included).
import { poolEventSchema, poolEventTypes, type PoolEvent } from '../../domain/pool/events.ts';
import { withoutBookkeeping } from '../../domain/pool/history.ts';
import { evolve, initialState, type FollowedPool, type PoolState } from '../../domain/pool/state.ts';
import type { Migration, PoolClient } from '../../infra/db.ts';
import type { RecordedEvent, RecordedFact } from '../../infra/eventstore/port.ts';
import { parseEvent } from '../../domain/shared/parse-once.ts';
import type { BatchMemory, Projector } from '../projector.ts';
import { renderedRecord } from './record.ts';

/** The table as the list query reads it (the conventional baseline creates the same one). */
export const subscriptionsTable: Migration = {
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
};

const migrations: Migration[] = [
  subscriptionsTable,
  {
    // The row folds the domain state (the ledger events: withdrawals, pending legs, trades,
    // fees, closing, venue observations). Emptied with the checkpoint: the projector replays.
    id: 'subscriptions/002-pool-state',
    sql: `ALTER TABLE subscriptions ADD COLUMN state jsonb NOT NULL DEFAULT '{}'::jsonb,
      ADD COLUMN followed boolean NOT NULL DEFAULT true,
      ADD COLUMN venue_equity_micro bigint,
      ADD COLUMN venue_free_margin_micro bigint,
      ADD COLUMN venue_gap_micro bigint;
    DELETE FROM subscriptions;
    DELETE FROM projection_checkpoints WHERE name = 'subscriptions';`,
  },
  {
    // The folded state moves to a table of its own: the list reads narrow rows, only the projector reads states.
    id: 'subscriptions/003-pool-state-apart',
    sql: `CREATE TABLE subscription_states (pool_id text PRIMARY KEY, state jsonb NOT NULL);
    INSERT INTO subscription_states (pool_id, state) SELECT pool_id, state FROM subscriptions;
    ALTER TABLE subscriptions DROP COLUMN state;`,
  },
  {
    // A stopped pool's row kept the figures of the batch before the stop (the payout that closed it
    // and anything else in its batch were lost, and a pool opened and stopped in one batch had no
    // row): the auditors' replay found it. Replayed, states and rows, with the fixed fold.
    id: 'subscriptions/004-stopped-rows',
    sql: `DELETE FROM subscriptions;
    DELETE FROM subscription_states;
    DELETE FROM projection_checkpoints WHERE name = 'subscriptions';`,
  },
  {
    // The record the list answers, rendered when the row changes (record.ts renderedRecord) and
    // replayed so every row has it. A change to the record's rendering ships with a migration like
    // this one; until it runs, the auditors' replay shows the stale rows.
    id: 'subscriptions/005-rendered-record',
    sql: `ALTER TABLE subscriptions ADD COLUMN record_json text;
    DELETE FROM subscriptions;
    DELETE FROM subscription_states;
    DELETE FROM projection_checkpoints WHERE name = 'subscriptions';`,
  },
  {
    // A followed row without its rendering would silently drop out of the list (string_agg skips NULL).
    id: 'subscriptions/006-rendered-record-required',
    sql: `ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_followed_rendered CHECK (NOT followed OR record_json IS NOT NULL);`,
  },
  {
    // The record shows the last movement the venue failed, and why: replayed, so that every row has it.
    id: 'subscriptions/007-last-failed-transfer',
    sql: `ALTER TABLE subscriptions ADD COLUMN last_failed_transfer jsonb;
    DELETE FROM subscriptions;
    DELETE FROM subscription_states;
    DELETE FROM projection_checkpoints WHERE name = 'subscriptions';`,
  },
  {
    // A pool followed with goLiveUponConfirmation false waits for its go-live (the record's
    // `isLive`): replayed, so that every row says whether its pool is live.
    id: 'subscriptions/008-awaiting-go-live',
    sql: `ALTER TABLE subscriptions ADD COLUMN awaiting_go_live boolean NOT NULL DEFAULT false;
    DELETE FROM subscriptions;
    DELETE FROM subscription_states;
    DELETE FROM projection_checkpoints WHERE name = 'subscriptions';`,
  },
];

/** The pool id is the stream name without its `pool-` prefix. */
const poolIdOf = (event: RecordedEvent): string => event.streamName.slice('pool-'.length);

/**
 * A pool event as the domain folds it (null for any other event); an AllocationAdded written before
 * it carried its time takes the event's. The auditors' replay reads the log through it too.
 */
export function poolEventOf(event: RecordedFact): PoolEvent | null {
  if (!event.streamName.startsWith('pool-') || !poolEventTypes.has(event.type)) return null;
  const parsed = parseEvent(poolEventSchema, event.type, event.data);
  if (parsed.type === 'AllocationAdded' && parsed.data.at === undefined) return { ...parsed, data: { ...parsed.data, at: event.metadata.occurredAt } };
  return parsed;
}

/**
 * What the row keeps of the domain state: everything the record and later events need, without
 * the per-id bookkeeping that only deciding needs (fates of transfers and trades), which would
 * grow the row with every movement.
 */
const kept = withoutBookkeeping;

const COLUMNS = [
  'user_id',
  'agent_id',
  'wallet_context',
  'pool_id',
  'agent_name',
  'agent_image_url',
  'venue',
  'max_leverage',
  'success_fee_percent',
  'min_allocation_micro',
  'min_trade_micro',
  'min_per_trade_percent',
  'recommended_per_trade_percent',
  'max_concurrent_positions',
  'max_entries_per_trade',
  'trade_mode',
  'allocation_mode',
  'allocation_percentage_min',
  'allocation_percentage_max',
  'allocation_amount_usd_micro',
  'allocation_amount_sol_lamports',
  'go_live_upon_confirmation',
  'is_paused',
  'confirmed_in_micro',
  'confirmed_out_micro',
  'realized_micro',
  'unrealized_micro',
  'locked_micro',
  'pending_in_micro',
  'pending_out_micro',
  'fees_charged_micro',
  'bridge_status',
  'bridge_transaction_id',
  'reconciliation_status',
  'venue_equity_micro',
  'venue_free_margin_micro',
  'venue_gap_micro',
  'last_failed_transfer',
  'awaiting_go_live',
  'subscribed_at',
  'created_at',
  'updated_at',
  'followed',
  'record_json',
] as const;

/** The row of a followed pool (a closed one keeps its last figures, `followed` false: foldPool). */
function rowOf(state: FollowedPool): Record<string, unknown> {
  const { terms: t, settings: s, ledger: l } = state;
  return {
    user_id: state.userId,
    agent_id: state.agentId,
    wallet_context: state.walletContext,
    pool_id: state.poolId,
    agent_name: t.agentName,
    agent_image_url: t.agentImageUrl,
    venue: t.venue,
    max_leverage: t.maxLeverage,
    success_fee_percent: t.successFeePercent,
    min_allocation_micro: t.minAllocationUsd,
    min_trade_micro: t.minTradeUsd,
    min_per_trade_percent: t.minPerTradePercent,
    recommended_per_trade_percent: t.recommendedPerTradePercent,
    max_concurrent_positions: t.maxConcurrentPositions,
    max_entries_per_trade: t.maxEntriesPerTrade,
    trade_mode: s.tradeMode,
    allocation_mode: s.allocationMode,
    allocation_percentage_min: s.allocationPercentageMin,
    allocation_percentage_max: s.allocationPercentageMax,
    allocation_amount_usd_micro: s.allocationAmountUsd,
    allocation_amount_sol_lamports: s.allocationAmountSol,
    go_live_upon_confirmation: s.goLiveUponConfirmation,
    is_paused: s.isPaused,
    confirmed_in_micro: l.confirmedIn,
    confirmed_out_micro: l.confirmedOut,
    realized_micro: l.realized,
    unrealized_micro: l.unrealized,
    locked_micro: l.locked,
    pending_in_micro: l.pendingIn,
    pending_out_micro: l.pendingOut,
    fees_charged_micro: l.feesCharged,
    bridge_status: state.bridge?.status ?? null,
    bridge_transaction_id: state.bridge?.transactionId ?? null,
    reconciliation_status: state.reconciliation?.status ?? null,
    venue_equity_micro: state.reconciliation?.venueEquityMicro ?? null,
    venue_free_margin_micro: state.reconciliation?.venueFreeMarginMicro ?? null,
    venue_gap_micro: state.reconciliation?.gapMicro ?? null,
    last_failed_transfer: state.lastFailedTransfer ?? null,
    awaiting_go_live: state.awaitingGoLive === true,
    subscribed_at: state.subscribedAt,
    created_at: state.subscribedAt,
    updated_at: state.updatedAt,
    followed: true,
  };
}

/** The stored row, where a pool not followed after the batch keeps its figures (read only then). */
const STORED: unique symbol = Symbol('the stored row, followed false');

interface PoolFold {
  state: PoolState;
  /** the row after the batch: laid out from a followed state, the stored one (STORED), or none */
  row: Record<string, unknown> | typeof STORED | undefined;
  lastFollowed: FollowedPool | null;
}

/**
 * A pool's events of the batch folded event by event, as applying them one at a time would: a pool
 * followed and stopped within one batch still leaves its row (followed false, its last figures).
 * The stored state is JSON: its (always empty) bookkeeping maps are made anew.
 */
function foldPool(storedState: PoolState | undefined, events: PoolEvent[]): PoolFold {
  let state = storedState ? kept(storedState) : initialState();
  let row: PoolFold['row'] = storedState ? STORED : undefined;
  let lastFollowed: FollowedPool | null = null;
  for (const event of events) {
    state = evolve(state, event);
    if (state.followed) {
      row = rowOf(state);
      lastFollowed = state;
    } else if (typeof row === 'object') {
      const laidOut: Record<string, unknown> = row;
      row = { ...laidOut, followed: false };
    }
  }
  return { state, row, lastFollowed };
}

async function storedRowsOf(client: PoolClient, poolIds: string[]): Promise<Map<string, Record<string, unknown>>> {
  const { rows } = await client.query<{ pool_id: string; row: Record<string, unknown> }>({
    name: 'subscriptions-stored-rows',
    text: 'SELECT pool_id, to_jsonb(s) AS row FROM subscriptions s WHERE pool_id = ANY($1::text[])',
    values: [poolIds],
  });
  return new Map(rows.map((r) => [r.pool_id, r.row]));
}

const STATES_UPSERT = `INSERT INTO subscription_states (pool_id, state) SELECT pool_id, state FROM jsonb_to_recordset($1::jsonb) AS v(pool_id text, state jsonb)
  ON CONFLICT (pool_id) DO UPDATE SET state = EXCLUDED.state`;

/** The states and the rows in one statement (one round trip): the rows' upsert reads no state. */
const STATES_AND_ROWS_UPSERT = `WITH states AS (${STATES_UPSERT})
  INSERT INTO subscriptions (${COLUMNS.join(', ')})
  SELECT ${COLUMNS.join(', ')} FROM jsonb_populate_recordset(NULL::subscriptions, $2::jsonb)
  ON CONFLICT (user_id, agent_id, wallet_context) DO UPDATE SET ${COLUMNS.filter((c) => !['user_id', 'agent_id', 'wallet_context'].includes(c))
    .map((c) => `${c} = EXCLUDED.${c}`)
    .join(', ')}`;

/** How many pools' states a runner's memory keeps (the least recently written out first). */
const REMEMBERED_POOLS = 10_000;

/**
 * The stored states of `poolIds`: those this runner's batches wrote last are taken from its memory (projections/projector.ts
 * BatchMemory), the others read in one statement.
 */
async function storedStatesOf(client: PoolClient, poolIds: string[], memory: BatchMemory | undefined): Promise<Map<string, PoolState>> {
  const stored = new Map<string, PoolState>();
  const unknown: string[] = [];
  for (const id of poolIds) {
    const remembered = memory?.get(id) as PoolState | undefined;
    if (remembered) stored.set(id, remembered);
    else unknown.push(id);
  }
  if (unknown.length === 0) return stored;
  const { rows } = await client.query<{ pool_id: string; state: PoolState }>({
    name: 'subscriptions-states-only',
    text: 'SELECT pool_id, state FROM subscription_states WHERE pool_id = ANY($1::text[])',
    values: [unknown],
  });
  for (const r of rows) stored.set(r.pool_id, r.state);
  return stored;
}

/** The states the batch writes, remembered as written (read, never changed: evolve makes new states). */
function remember(memory: BatchMemory | undefined, states: Array<{ pool_id: string; state: PoolState }>): void {
  if (!memory) return;
  for (const { pool_id, state } of states) {
    memory.delete(pool_id);
    memory.set(pool_id, state);
  }
  for (const id of memory.keys()) {
    if (memory.size <= REMEMBERED_POOLS) break;
    memory.delete(id);
  }
}

/**
 * A batch in two statements: the stored states of every pool it touches (none for the pools this
 * runner's memory holds), then one upsert of their states and rows, each folded with the domain's evolve in event order (a third
 * reads the rows of pools it leaves not followed). Equal to applying the events one by one (test/projections/batch-equivalence.test.ts).
 */
async function applyBatch(client: PoolClient, events: RecordedEvent[], memory?: BatchMemory): Promise<void> {
  const byPool = new Map<string, PoolEvent[]>();
  for (const recorded of events) {
    const event = poolEventOf(recorded);
    if (!event) continue;
    const id = poolIdOf(recorded);
    const list = byPool.get(id);
    if (list) list.push(event);
    else byPool.set(id, [event]);
  }
  if (byPool.size === 0) return;
  const stored = await storedStatesOf(client, [...byPool.keys()], memory);
  const folds = [...byPool].map(([id, poolEvents]) => ({ id, ...foldPool(stored.get(id), poolEvents) }));
  // A pool not followed after the batch keeps its stored row's figures (followed false): those rows
  // alone are read, a second statement in the batches that stop a pool.
  const unfollowed = folds.filter((f) => f.row === STORED).map((f) => f.id);
  const storedRows = unfollowed.length === 0 ? new Map<string, Record<string, unknown>>() : await storedRowsOf(client, unfollowed);
  const states: Array<{ pool_id: string; state: PoolState }> = [];
  const upserts: Array<Record<string, unknown>> = [];
  for (const { id, state, row: folded, lastFollowed } of folds) {
    states.push({ pool_id: id, state: kept(state) });
    const previous = storedRows.get(id);
    const row = folded === STORED ? (previous ? { ...previous, followed: false } : undefined) : folded;
    // Rendered once per pool and batch, from the state the row's columns were last laid out from.
    if (row) upserts.push(lastFollowed ? { ...row, record_json: renderedRecord(lastFollowed) } : row);
  }
  if (upserts.length === 0) await client.query({ name: 'subscription-states-upsert', text: STATES_UPSERT, values: [JSON.stringify(states)] });
  else
    await client.query({
      name: 'subscription-states-and-rows-upsert',
      text: STATES_AND_ROWS_UPSERT,
      values: [JSON.stringify(states), JSON.stringify(upserts)],
    });
  remember(memory, states);
}

export const subscriptionsProjector: Projector = {
  name: 'subscriptions',
  migrations,
  tables: ['subscriptions', 'subscription_states'],
  applyBatch,
  apply: (client, recorded) => applyBatch(client, [recorded]),
};
