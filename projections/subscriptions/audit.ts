// The auditors' replay against the `subscriptions` read model: each pool's events folded
// with the domain's own replay (domain/pool/history.ts), compared with its row column by column.
// Store-agnostic: it reads through the event-store port only. Both sides are taken at the read
// model's checkpoint, so a projector that is merely behind (or a live service) shows no difference.
import { poolEventTypes, type PoolEvent } from '../../domain/pool/events.ts';
import { replayStep, startReplay, type PoolHistoryEvent, type Replayed } from '../../domain/pool/history.ts';
import type { Pool } from '../../infra/db.ts';
import { comparePositions, START, type EventStore, type Position, type RecordedEntry, type RecordedFact } from '../../infra/eventstore/port.ts';
import { readCheckpoint } from '../checkpoints.ts';
import { poolEventOf } from './projector.ts';
import { RECORD_COLUMNS } from './queries.ts';
import { renderedRecord } from './record.ts';
import { viewOfPool, viewOfRow, type PoolView, type SubscriptionRow } from './view.ts';

export const POOL_STREAM_PREFIX = 'pool-';
export const poolIdOfStream = (streamName: string): string => streamName.slice(POOL_STREAM_PREFIX.length);

/**
 * A recorded pool event as the replay takes it (null for any other event); its time is the command's.
 * Folded as recorded, without poolEventOf's parse: the pool decider wrote it, and the command room
 * folds the same events unparsed to decide on them (commands/handle.ts), so a statement, the ledger
 * and its exports say what a decision saw. The parse was a third of a 10,000-event statement's read
 * and doubled what the read keeps alive (docs/decisions.md, "Statement and export reads"). An
 * AllocationAdded written before it carried its time takes the event's, as poolEventOf gives it.
 */
export function historyEventOf(recorded: RecordedEntry): PoolHistoryEvent | null {
  if (!recorded.streamName.startsWith(POOL_STREAM_PREFIX) || !poolEventTypes.has(recorded.type)) return null;
  const event = { type: recorded.type, data: recorded.data } as PoolEvent;
  const position = { commit: String(recorded.position.commit), prepare: String(recorded.position.prepare) };
  const dated =
    event.type === 'AllocationAdded' && event.data.at === undefined ? { ...event, data: { ...event.data, at: recorded.metadata.occurredAt } } : event;
  return { id: recorded.id, time: recorded.time, event: dated, position };
}

/** One pool's history from its stream (readStreamEntries), oldest first; with `until`, only what the log held at that position. */
export async function poolHistory(store: Pick<EventStore, 'readStreamEntries'>, poolId: string, until?: Position): Promise<PoolHistoryEvent[]> {
  const recorded = await store.readStreamEntries(`${POOL_STREAM_PREFIX}${poolId}`);
  const events: PoolHistoryEvent[] = [];
  for (const r of recorded) {
    if (until && comparePositions(r.position, until) > 0) break;
    const event = historyEventOf(r);
    if (event) events.push(event);
  }
  return events;
}

/** A read-model row as the audit reads it: what the record is made of, plus its id, `followed` and the rendered record. */
export type AuditRow = SubscriptionRow & { pool_id: string; followed: boolean; record_json: string | null };

/** The read model's rows (all, or those of `poolIds`) and the position it has applied, in one snapshot. */
export async function readModelSnapshot(db: Pool, poolIds?: readonly string[]): Promise<{ checkpoint: Position; rows: Map<string, AuditRow> }> {
  const client = await db.connect();
  try {
    // One snapshot for both, so the rows are exactly those of the events up to the checkpoint.
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const checkpoint = await readCheckpoint(client, 'subscriptions');
    const { rows } = await client.query<AuditRow>(
      `SELECT pool_id, followed, record_json, ${RECORD_COLUMNS} FROM subscriptions WHERE $1::text[] IS NULL OR pool_id = ANY($1::text[])`,
      [poolIds ?? null],
    );
    await client.query('COMMIT');
    return { checkpoint, rows: new Map(rows.map((r) => [r.pool_id, r])) };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Every pool id the read model has a row for. */
export async function readModelPoolIds(db: Pool): Promise<string[]> {
  const { rows } = await db.query<{ pool_id: string }>('SELECT pool_id FROM subscriptions');
  return rows.map((r) => r.pool_id);
}

export type AuditStatus = 'MATCH' | 'DIFFERENT' | 'MISSING_ROW' | 'ORPHAN_ROW';
type Value = string | number | boolean | null;
export interface Difference {
  /** the read model's column */
  field: string;
  /** what the replay of the events says */
  ledger: Value;
  /** what the row holds */
  readModel: Value;
}
export interface PoolAudit {
  poolId: string;
  /** pool events replayed */
  events: number;
  status: AuditStatus;
  differences: Difference[];
}

const iso = (time: string): string => new Date(time).toISOString();

/** A failed movement as one value, its fields in one order (a jsonb column gives them back in its own). */
const failureValue = (f: PoolView['lastFailedTransfer']): string | null => f && JSON.stringify([f.transferId, f.direction, f.amountMicro, f.reason, iso(f.at)]);

/** What a record is made of, by the column that holds it: read from a row and from a replay alike. */
function columnsOfView(v: PoolView): Record<string, Value> {
  const { terms: t, settings: s, ledger: l } = v;
  return {
    agent_id: v.agentId,
    wallet_context: v.walletContext,
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
    bridge_status: v.bridge?.status ?? null,
    bridge_transaction_id: v.bridge?.transactionId ?? null,
    reconciliation_status: v.reconciliation?.status ?? null,
    venue_equity_micro: v.reconciliation?.venueEquityMicro ?? null,
    venue_free_margin_micro: v.reconciliation?.venueFreeMarginMicro ?? null,
    venue_gap_micro: v.reconciliation?.gapMicro ?? null,
    last_failed_transfer: failureValue(v.lastFailedTransfer),
    awaiting_go_live: !v.live,
    subscribed_at: iso(v.subscribedAt),
    updated_at: iso(v.updatedAt),
  };
}

/**
 * One pool's replay against its row. The row must hold the replayed pool (a stopped one: its last
 * followed state, `followed` false); a pool never followed must have none.
 */
export function comparePool(poolId: string, replayed: Replayed | undefined, row: AuditRow | undefined): PoolAudit {
  const events = replayed?.events ?? 0;
  const pool = replayed?.lastFollowed ?? null;
  const result = (status: AuditStatus, differences: Difference[] = []): PoolAudit => ({ poolId, events, status, differences });
  if (!pool) return result(row ? 'ORPHAN_ROW' : 'MATCH');
  if (!row) return result('MISSING_ROW');
  const ledger = { user_id: pool.userId, followed: replayed!.state.followed, ...columnsOfView(viewOfPool(pool)), record_json: renderedRecord(pool) };
  const readModel: Record<string, Value> = {
    user_id: row.user_id,
    followed: row.followed,
    ...columnsOfView(viewOfRow(row)),
    record_json: row.record_json,
  };
  const differences = Object.entries(ledger)
    .filter(([field, value]) => !Object.is(value, readModel[field]))
    .map(([field, value]) => ({ field, ledger: value, readModel: readModel[field] ?? null }));
  return result(differences.length ? 'DIFFERENT' : 'MATCH', differences);
}

/** One pool replayed from its stream up to `until` and compared with `row`. */
export async function auditPool(store: EventStore, poolId: string, until: Position, row: AuditRow | undefined): Promise<PoolAudit> {
  const history = await poolHistory(store, poolId, until);
  const replayed = history.length ? history.reduce((r, e) => replayStep(r, e.event), startReplay()) : undefined;
  return comparePool(poolId, replayed, row);
}

export const READ_BATCH = 1000;

export interface LogReplay {
  pools: Map<string, Replayed>;
  /** pool events read from the log */
  events: number;
}

/**
 * One pass over the global log up to `until`, in batches of READ_BATCH, folding each pool's events
 * as they come (no stream is read on its own). Only the pool streams' facts are read (readAllFacts):
 * what the fold needs of each, nothing of the other streams. The next batch is asked for before
 * this one is folded, so the store works while the fold runs.
 */
export async function replayLog(store: EventStore, until: Position, onProgress?: (events: number) => void): Promise<LogReplay> {
  const byStream = new Map<string, Replayed>();
  let events = 0;
  if (comparePositions(until, START) <= 0) return { pools: byStream, events };
  const read = (fromPosition: Position) => store.readAllFacts({ fromPosition, maxCount: READ_BATCH, streamPrefix: POOL_STREAM_PREFIX });
  let next: Promise<RecordedFact[]> | null = read(START);
  while (next) {
    const batch: RecordedFact[] = await next;
    const last = batch.at(-1);
    const more = batch.length === READ_BATCH && comparePositions(last!.position, until) < 0;
    next = more ? read(last!.position) : null;
    for (const recorded of batch) {
      if (comparePositions(recorded.position, until) > 0) break;
      events += 1;
      const event = poolEventOf(recorded);
      if (!event) continue;
      const stream = recorded.streamName;
      byStream.set(stream, replayStep(byStream.get(stream) ?? startReplay(), event));
    }
    onProgress?.(events);
  }
  const pools = new Map<string, Replayed>();
  for (const [stream, replayed] of byStream) pools.set(poolIdOfStream(stream), replayed);
  return { pools, events };
}

/** Every pool of the replay and of the read model, compared, in pool id order. */
export function compareAll(pools: ReadonlyMap<string, Replayed>, rows: ReadonlyMap<string, AuditRow>): PoolAudit[] {
  const ids = [...new Set([...pools.keys(), ...rows.keys()])].sort();
  return ids.map((id) => comparePool(id, pools.get(id), rows.get(id)));
}
