// Fee receipts: each success-fee settlement of a pool (`FeesSettled`) as a follower can check it
// (docs/decisions.md, "Pools: fee receipts"). Pure: a fold over the pool's recorded events, with the
// ledger's own maths (ledger.ts), so a receipt says what the settlement computed, never a second
// reckoning. The high-water mark is not in the event: it is the fold's, per opening of the pool.
import type { MicroUsd } from '../shared/money.ts';
import { timeOf, type PoolEvent } from './events.ts';
import type { PoolHistoryEvent } from './history.ts';
import { chargeableProfitUsd, emptyLedger, pendingSuccessFeeUsd } from './ledger.ts';

/** What set a settlement off: a confirmed withdrawal, a stop, or (an event whose command left no trace) unknown. */
export type FeeTrigger = 'withdrawal' | 'stop' | 'unknown';

export interface FeeReceipt {
  /** the FeesSettled event's place in the pool's history, from 1 (the ledger's `sequence`) */
  sequence: number;
  eventId: string;
  position: NonNullable<PoolHistoryEvent['position']> | null;
  settlementId: string;
  settledAt: string;
  trigger: FeeTrigger;
  /** the withdrawal or stop transfer that set it off */
  triggerTransferId: string | null;
  successFeePercent: number;
  realizedPnl: MicroUsd;
  unrealizedPnl: MicroUsd;
  /** realized PnL net of open losses: what the fee is measured on */
  chargeableProfit: MicroUsd;
  highWaterMarkBefore: MicroUsd;
  highWaterMarkAfter: MicroUsd;
  feesChargedBefore: MicroUsd;
  feesChargedAfter: MicroUsd;
  /** what was owed: fee% × chargeableProfit, floored, minus feesChargedBefore */
  feeDue: MicroUsd;
  /** what left the pool: feeDue, or less when less was free (the rest stays pending) */
  fee: MicroUsd;
  creatorFee: MicroUsd;
  platformFee: MicroUsd;
}

/** Events one command appended together share its time; the settlement's neighbours in that batch tell what set it off. */
function triggerOf(events: readonly PoolHistoryEvent[], index: number, at: string): { trigger: FeeTrigger; triggerTransferId: string | null } {
  const sameCommand = (e: PoolHistoryEvent | undefined): e is PoolHistoryEvent => e !== undefined && timeOf(e.event) === at;
  for (let i = index + 1; sameCommand(events[i]); i += 1) {
    const { event } = events[i]!;
    if (event.type === 'PoolClosed') return { trigger: 'stop', triggerTransferId: event.data.transferId ?? null };
  }
  for (let i = index - 1; sameCommand(events[i]); i -= 1) {
    const { event } = events[i]!;
    if (event.type === 'AllocationSettled' && event.data.direction === 'out' && event.data.outcome === 'confirmed') {
      return { trigger: 'withdrawal', triggerTransferId: event.data.transferId };
    }
  }
  return { trigger: 'unknown', triggerTransferId: null };
}

type Settlement = Extract<PoolEvent, { type: 'FeesSettled' }>['data'];

/** A settlement's chargeable profit, and the fee that was due (what the pool's fees owed before it). */
function settlementFigures(data: Settlement): { chargeableProfit: MicroUsd; feeDue: MicroUsd } {
  const { realizedMicro: realized, unrealizedMicro: unrealized, feesChargedBeforeMicro: feesCharged, successFeePercent } = data;
  return {
    chargeableProfit: chargeableProfitUsd({ realized, unrealized }),
    feeDue: pendingSuccessFeeUsd({ ...emptyLedger(), realized, unrealized, feesCharged }, successFeePercent),
  };
}

/** The mark after a settlement: it rises to the settlement's chargeable profit only when all that was due was paid. */
function markAfter(hwm: MicroUsd, data: Settlement, figures = settlementFigures(data)): MicroUsd {
  const { chargeableProfit, feeDue } = figures;
  return data.feeMicro >= feeDue ? Math.max(hwm, chargeableProfit) : hwm;
}

/**
 * The receipt of the settlement at `index`, given the high-water mark before it: the chargeable
 * profit the pool's fees were last brought fully up to date at. The mark rises only with a
 * settlement that paid all that was due; one that took less (less was free) leaves it.
 */
function receiptOf(events: readonly PoolHistoryEvent[], index: number, data: Settlement, hwm: MicroUsd, offset: number): FeeReceipt {
  const { realizedMicro: realized, unrealizedMicro: unrealized, feesChargedBeforeMicro: feesCharged, successFeePercent } = data;
  const figures = settlementFigures(data);
  const { chargeableProfit, feeDue } = figures;
  const recorded = events[index]!;
  return {
    sequence: offset + index + 1,
    eventId: recorded.id,
    position: recorded.position ?? null,
    settlementId: data.settlementId,
    settledAt: data.at,
    ...triggerOf(events, index, data.at),
    successFeePercent,
    realizedPnl: realized,
    unrealizedPnl: unrealized,
    chargeableProfit,
    highWaterMarkBefore: hwm,
    highWaterMarkAfter: markAfter(hwm, data, figures),
    feesChargedBefore: feesCharged,
    feesChargedAfter: feesCharged + data.feeMicro,
    feeDue,
    fee: data.feeMicro,
    creatorFee: data.creatorMicro,
    platformFee: data.platformMicro,
  };
}

/** Where a fold of the receipts resumes: the history's events before it, and the high-water mark after them (fold-snapshot.ts). */
export interface ReceiptsStart {
  /** the events folded before the first one given */
  offset: number;
  highWaterMark: MicroUsd;
}

/** The high-water mark after `event` (a follow opens the ledger anew: no mark; a settlement may raise it). */
export function nextHighWaterMark(hwm: MicroUsd, event: PoolEvent): MicroUsd {
  if (event.type === 'AgentFollowed') return 0;
  return event.type === 'FeesSettled' ? markAfter(hwm, event.data) : hwm;
}

/**
 * Every settlement of the pool's history, oldest first, keyed by the event's place in it. From a
 * `start`, `events` are the history after its `offset` events (keys and sequences count from the
 * history's first event); a settlement's trigger is read from its neighbours among `events` only.
 */
export function feeReceipts(events: readonly PoolHistoryEvent[], start: ReceiptsStart = { offset: 0, highWaterMark: 0 }): Map<number, FeeReceipt> {
  const receipts = new Map<number, FeeReceipt>();
  let hwm: MicroUsd = start.highWaterMark;
  for (const [index, { event }] of events.entries()) {
    if (event.type === 'FeesSettled') receipts.set(start.offset + index, receiptOf(events, index, event.data, hwm, start.offset));
    hwm = nextHighWaterMark(hwm, event);
  }
  return receipts;
}
