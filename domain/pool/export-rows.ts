// The pool ledger's lines as an export writes them (projections/exports): one flat row per pool
// event, its own money and the running figures after it, every amount micro-USD that the file
// writes as exact decimal text (LEDGER_MICRO_COLUMNS). Pure: the fold of the pool so far comes in, as the ledger route's replay makes it
// (history.ts), so an exported line says what GET …/ledger says of the same event.
import type { PoolEvent } from './events.ts';
import { eventAmounts, eventOutcome, figuresOf, type EventAmounts } from './history.ts';
import type { PoolState } from './state.ts';

/** One cell: text, a count, a flag, or nothing (an empty CSV cell, a JSON null). */
export type ExportCell = string | number | boolean | null;

/** A recorded event's place and time, as every exported row carries them. */
export interface ExportedEvent {
  id: string;
  /** its place in the store's global log (decimal strings) */
  position: { commit: string; prepare: string };
  /** ISO time of the command that decided it */
  time: string;
}

const AMOUNT_COLUMNS = [
  'amountUsd',
  'marginUsd',
  'unrealizedPnlUsd',
  'realizedPnlUsd',
  'feeUsd',
  'platformFeeUsd',
  'creatorFeeUsd',
  'venueEquityUsd',
  'venueFreeMarginUsd',
  'venueGapUsd',
] as const satisfies readonly (keyof EventAmounts)[];

export const LEDGER_COLUMNS = [
  'poolId',
  'sequence',
  'eventId',
  'globalCommit',
  'globalPrepare',
  'time',
  'type',
  ...AMOUNT_COLUMNS,
  'outcome',
  'reason',
  'followed',
  'allocatedUsd',
  'currentBalanceUsd',
  'withdrawableUsd',
  'pendingDeltaUsd',
] as const;

export type LedgerRow = Record<(typeof LEDGER_COLUMNS)[number], ExportCell>;

/**
 * The columns holding micro-USD (integers, or null), which an export writes as exact decimal text
 * (microToDecimal): the row keeps the number, and the encoder writes its digits, so a line makes no
 * amount's text (projections/exports/encode.ts).
 */
export const LEDGER_MICRO_COLUMNS: ReadonlySet<(typeof LEDGER_COLUMNS)[number]> = new Set([
  ...AMOUNT_COLUMNS,
  'allocatedUsd',
  'currentBalanceUsd',
  'withdrawableUsd',
  'pendingDeltaUsd',
]);

/**
 * The line of the pool's `index`-th event (0 for its first), with `after` the pool folded through it;
 * written into `into` when given (an export writes each line before it makes the next, so one row
 * object serves them all), its cells set in the columns' order.
 */
export function ledgerRowOf(poolId: string, index: number, recorded: ExportedEvent, event: PoolEvent, after: PoolState, into?: LedgerRow): LedgerRow {
  const amounts = eventAmounts(event);
  const { outcome, reason } = eventOutcome(event);
  const figures = figuresOf(after);
  const row = into ?? ({} as LedgerRow);
  row.poolId = poolId;
  row.sequence = index + 1;
  row.eventId = recorded.id;
  row.globalCommit = recorded.position.commit;
  row.globalPrepare = recorded.position.prepare;
  row.time = recorded.time;
  row.type = event.type;
  row.amountUsd = amounts.amountUsd ?? null;
  row.marginUsd = amounts.marginUsd ?? null;
  row.unrealizedPnlUsd = amounts.unrealizedPnlUsd ?? null;
  row.realizedPnlUsd = amounts.realizedPnlUsd ?? null;
  row.feeUsd = amounts.feeUsd ?? null;
  row.platformFeeUsd = amounts.platformFeeUsd ?? null;
  row.creatorFeeUsd = amounts.creatorFeeUsd ?? null;
  row.venueEquityUsd = amounts.venueEquityUsd ?? null;
  row.venueFreeMarginUsd = amounts.venueFreeMarginUsd ?? null;
  row.venueGapUsd = amounts.venueGapUsd ?? null;
  row.outcome = outcome ?? null;
  row.reason = reason ?? null;
  row.followed = after.followed;
  row.allocatedUsd = figures?.allocatedUsd ?? null;
  row.currentBalanceUsd = figures?.currentBalanceUsd ?? null;
  row.withdrawableUsd = figures?.withdrawableUsd ?? null;
  row.pendingDeltaUsd = figures?.pendingDeltaUsd ?? null;
  return row;
}
