// One row per trade of a follower pool (stream `trade-{tradeId}`): the columns the list filters and
// orders on, and the record it answers, rendered here once per trade and batch (record.ts). The row
// is the domain's own fold of the stream (domain/trade/state.ts evolve), kept in `trade_states`
// (only the projector reads it) with the times of its events, so the figures exist once.
import { tradeEventSchema, tradeEventTypes, type TradeEvent } from '../../domain/trade/events.ts';
import { evolve, initialState, type Trade, type TradeState } from '../../domain/trade/state.ts';
import { poolEndpointOf } from '../../domain/transfer/plan.ts';
import { parseEvent } from '../../domain/shared/parse-once.ts';
import type { Migration, PoolClient } from '../../infra/db.ts';
import type { Position, RecordedEvent } from '../../infra/eventstore/port.ts';
import type { Projector } from '../projector.ts';
import { renderedTrade, type TradeView } from './record.ts';

const migrations: Migration[] = [
  {
    id: 'projections/trades/001-trades',
    // The list is a user's trades, newest first (the request's time, then its global position for
    // requests of the same millisecond: one signal opens a trade in many pools at once), filtered
    // by agent, status or wallet context.
    sql: `CREATE TABLE trades (
      trade_id text PRIMARY KEY,
      pool_id text NOT NULL,
      user_id text NOT NULL,
      agent_id text NOT NULL,
      wallet_context text NOT NULL,
      status text NOT NULL,
      opened_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      requested_commit bigint NOT NULL,
      requested_prepare bigint NOT NULL,
      record_json text NOT NULL
    );
    CREATE INDEX trades_user ON trades (user_id, opened_at DESC, requested_commit DESC, requested_prepare DESC);
    CREATE INDEX trades_user_status ON trades (user_id, status, opened_at DESC, requested_commit DESC, requested_prepare DESC);
    CREATE INDEX trades_user_agent ON trades (user_id, agent_id, opened_at DESC, requested_commit DESC, requested_prepare DESC);
    CREATE TABLE trade_states (trade_id text PRIMARY KEY, state jsonb NOT NULL);`,
  },
  {
    // The price watcher ticks the trades still alive: pending entries and open positions.
    id: 'projections/trades/002-live',
    sql: `CREATE INDEX trades_live ON trades (trade_id) WHERE status IN ('pending', 'open');`,
  },
  {
    // Prices finer than a micro-USD: the stored folds held micro-USD prices; rebuilt from the events.
    id: 'projections/trades/003-exact-prices',
    sql: `DELETE FROM trades; DELETE FROM trade_states;
    DELETE FROM projection_checkpoints WHERE name = 'trades';`,
  },
];

/** A trade event as the domain folds it; null for any other event. */
export function tradeEventOf(event: RecordedEvent): TradeEvent | null {
  if (!event.streamName.startsWith('trade-') || !tradeEventTypes.has(event.type)) return null;
  return parseEvent(tradeEventSchema, event.type, event.data);
}

/** The fold and what the record needs besides it: the times of the trade's events, where it was requested. */
interface Folded extends Omit<TradeView, 'trade' | 'openedAt' | 'updatedAt'> {
  state: TradeState;
  openedAt: string | null;
  updatedAt: string | null;
  requested: Position | null;
}

const initialFolded = (): Folded => ({
  state: initialState(),
  closeReason: null,
  openedAt: null,
  filledAt: null,
  closedAt: null,
  updatedAt: null,
  requested: null,
});

function step(f: Folded, event: TradeEvent, position: Position): Folded {
  const state = evolve(f.state, event);
  if (state.status === 'none' || state.status === 'rejected') return { ...f, state };
  const { at } = event.data;
  const next: Folded = { ...f, state, updatedAt: at };
  if (f.state.status === 'none') return { ...next, openedAt: at, requested: position };
  switch (event.type) {
    case 'TradeFilled':
      return { ...next, filledAt: at };
    case 'TradeClosed':
      return { ...next, closedAt: at, closeReason: event.data.reason };
    case 'EntryExpired':
    case 'EntryCancelled':
      return { ...next, closedAt: at };
    default:
      return next;
  }
}

/** The fold as JSON (sizes, prices and positions are bigints: decimal digits) and back. */
const storedOf = (f: Folded): unknown => JSON.parse(JSON.stringify(f, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
const big = (v: unknown): bigint => BigInt(v as string);
const bigOrNull = (v: unknown): bigint | null => (v === null ? null : big(v));

function tradeOfStored(t: Trade): Trade {
  const { entry } = t;
  return {
    ...t,
    entry:
      entry.kind === 'zone'
        ? { ...entry, low: big(entry.low), high: big(entry.high) }
        : entry.kind === 'breakout'
          ? { ...entry, price: big(entry.price) }
          : entry,
    stop: t.stop && { ...t.stop, price: big(t.stop.price) },
    targets: t.targets.map((target) => ({ ...target, price: big(target.price) })),
    trailing: t.trailing && { ...t.trailing, armedAt: bigOrNull(t.trailing.armedAt) },
    averageFill: bigOrNull(t.averageFill),
    filledUnits: big(t.filledUnits),
    remainingUnits: big(t.remainingUnits),
  };
}

function foldedOf(stored: Folded): Folded {
  const { state, requested } = stored;
  return {
    ...stored,
    state: 'filledUnits' in state ? tradeOfStored(state) : state,
    requested: requested && { commit: BigInt(requested.commit), prepare: BigInt(requested.prepare) },
  };
}

/** The list's row of a requested trade (null before a request, or for a rejection without one). */
function rowOf(tradeId: string, f: Folded): Record<string, unknown> | null {
  const { state, openedAt, updatedAt, requested } = f;
  if (state.status === 'none' || state.status === 'rejected' || !openedAt || !updatedAt || !requested) return null;
  const pool = poolEndpointOf(state.poolId);
  return {
    trade_id: tradeId,
    pool_id: state.poolId,
    user_id: pool.userId,
    agent_id: pool.agentId,
    wallet_context: pool.walletContext,
    status: state.status,
    opened_at: openedAt,
    updated_at: updatedAt,
    requested_commit: requested.commit.toString(),
    requested_prepare: requested.prepare.toString(),
    record_json: renderedTrade({ ...f, trade: state, openedAt, updatedAt }),
  };
}

const COLUMNS = [
  'trade_id',
  'pool_id',
  'user_id',
  'agent_id',
  'wallet_context',
  'status',
  'opened_at',
  'updated_at',
  'requested_commit',
  'requested_prepare',
  'record_json',
];

/**
 * A batch in three statements: the stored folds of the trades it touches, then one upsert of their
 * folds and one of their rows, each folded in event order and rendered once.
 */
async function applyBatch(client: PoolClient, events: RecordedEvent[]): Promise<void> {
  const byTrade = new Map<string, Array<{ event: TradeEvent; position: Position }>>();
  for (const recorded of events) {
    const event = tradeEventOf(recorded);
    if (!event) continue;
    const id = recorded.streamName.slice('trade-'.length);
    const list = byTrade.get(id);
    if (list) list.push({ event, position: recorded.position });
    else byTrade.set(id, [{ event, position: recorded.position }]);
  }
  if (byTrade.size === 0) return;
  const { rows } = await client.query<{ trade_id: string; state: Folded }>({
    name: 'trade-states',
    text: 'SELECT trade_id, state FROM trade_states WHERE trade_id = ANY($1::text[])',
    values: [[...byTrade.keys()]],
  });
  const stored = new Map(rows.map((r) => [r.trade_id, foldedOf(r.state)]));
  const states: Array<{ trade_id: string; state: unknown }> = [];
  const upserts: Array<Record<string, unknown>> = [];
  for (const [id, tradeEvents] of byTrade) {
    const folded = tradeEvents.reduce((f, { event, position }) => step(f, event, position), stored.get(id) ?? initialFolded());
    states.push({ trade_id: id, state: storedOf(folded) });
    const row = rowOf(id, folded);
    if (row) upserts.push(row);
  }
  await client.query({
    name: 'trade-states-upsert',
    text: `INSERT INTO trade_states (trade_id, state) SELECT trade_id, state FROM jsonb_to_recordset($1::jsonb) AS v(trade_id text, state jsonb)
      ON CONFLICT (trade_id) DO UPDATE SET state = EXCLUDED.state`,
    values: [JSON.stringify(states)],
  });
  if (upserts.length === 0) return;
  await client.query({
    name: 'trades-upsert',
    text: `INSERT INTO trades (${COLUMNS.join(', ')}) SELECT ${COLUMNS.join(', ')} FROM jsonb_populate_recordset(NULL::trades, $1::jsonb)
      ON CONFLICT (trade_id) DO UPDATE SET ${COLUMNS.slice(1)
        .map((c) => `${c} = EXCLUDED.${c}`)
        .join(', ')}`,
    values: [JSON.stringify(upserts)],
  });
}

export const tradesProjector: Projector = {
  name: 'trades',
  migrations,
  tables: ['trades', 'trade_states'],
  applyBatch,
  apply: (client, recorded) => applyBatch(client, [recorded]),
};
