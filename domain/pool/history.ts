// The auditors' replay of one pool: its events folded one by one with the domain's own
// `evolve`, the ledger figures after each, and the pool as it was at a point in time. Pure: the
// events arrive with their ids and times; money stays micro-USD (the API renders USD).
import { PersistentMap } from '../shared/persistent-map.ts';
import { assertNever } from '../shared/decider.ts';
import type { MicroUsd } from '../shared/money.ts';
import { changed } from './copy.ts';
import type { PoolEvent } from './events.ts';
import { ledgerTermsOf, poolFigures, type PoolFigures } from './ledger.ts';
import { evolve, initialState, NO_REASON, type FollowedPool, type PoolState } from './state.ts';

/** A recorded pool event as the replay needs it: its id, its time (ISO) and the fact. */
export interface PoolHistoryEvent {
  id: string;
  /** when it happened: the time of the command that decided it */
  time: string;
  event: PoolEvent;
  /** its place in the store's global log (decimal strings; absent where the replay does not need it) */
  position?: { commit: string; prepare: string };
}

/** The event's own money fields (micro-USD, named as the API shows them in USD). */
export type EventAmounts = Partial<
  Record<
    | 'amountUsd'
    | 'marginUsd'
    | 'unrealizedPnlUsd'
    | 'realizedPnlUsd'
    | 'feeUsd'
    | 'platformFeeUsd'
    | 'creatorFeeUsd'
    | 'venueEquityUsd'
    | 'venueFreeMarginUsd'
    | 'venueGapUsd',
    MicroUsd
  >
>;

/** What each kind of fact moves or states in money; facts that move none have no amounts. */
export function eventAmounts(event: PoolEvent): EventAmounts {
  switch (event.type) {
    case 'AllocationAdded':
    case 'AllocationPending':
    case 'AllocationSettled':
      return { amountUsd: event.data.amountMicro };
    case 'WithdrawalRequested':
      return { amountUsd: event.data.transfer.amountMicro };
    case 'TradeOpened':
    case 'TradeSimulated':
      return { marginUsd: event.data.marginMicro };
    case 'TradeMarked':
      return { unrealizedPnlUsd: event.data.unrealizedPnlMicro };
    case 'TradeClosed':
      return { realizedPnlUsd: event.data.realizedPnlMicro };
    case 'FeesSettled':
      return { feeUsd: event.data.feeMicro, platformFeeUsd: event.data.platformMicro, creatorFeeUsd: event.data.creatorMicro };
    case 'ReconciliationObserved': {
      const { venueEquityMicro, venueFreeMarginMicro, gapMicro } = event.data;
      return {
        ...(venueEquityMicro !== null ? { venueEquityUsd: venueEquityMicro } : {}),
        ...(venueFreeMarginMicro !== null ? { venueFreeMarginUsd: venueFreeMarginMicro } : {}),
        ...(gapMicro !== null ? { venueGapUsd: gapMicro } : {}),
      };
    }
    case 'AgentFollowed':
    case 'FollowSettingsUpdated':
    case 'TransferRejected':
    case 'TradeRefused':
    case 'BridgeStatusChanged':
    case 'PoolClosed':
    case 'GoLiveDeferred':
    case 'PoolWentLive':
      return {};
    default:
      return assertNever(event);
  }
}

/** How a fact ended, when it says: a settlement confirmed or failed, and why one did not go through. */
export interface EventOutcome {
  outcome?: 'confirmed' | 'failed';
  reason?: string;
}

export function eventOutcome(event: PoolEvent): EventOutcome {
  switch (event.type) {
    case 'AllocationSettled':
      return event.data.outcome === 'failed' ? { outcome: 'failed', reason: event.data.reason ?? NO_REASON } : { outcome: 'confirmed' };
    case 'TransferRejected':
    case 'TradeRefused':
      return { reason: event.data.reason };
    default:
      return {};
  }
}

/** Every figure of a followed pool (ledger.ts); null for a pool not followed, which holds no ledger. */
export function figuresOf(state: PoolState): PoolFigures | null {
  if (!state.followed) return null;
  return poolFigures(state.ledger, ledgerTermsOf(state));
}

/**
 * The state without the per-id bookkeeping that only deciding reads (the fates of transfers and
 * trades, payouts): `evolve` never reads it, so a fold that drops it after each event ends with
 * the same pool, without copying records that grow with every movement. The read model keeps the
 * same (its row's state). The count of openings and the spent seat claims go too: only a decision
 * reads them, always on a fold from the stream's first event, while a stored state folded since
 * before they existed would count from then.
 */
export function withoutBookkeeping(state: PoolState): PoolState {
  const kept = changed(state, { transfers: PersistentMap.empty(), trades: PersistentMap.empty(), payouts: PersistentMap.empty() });
  delete kept.openings;
  delete kept.closedClaims;
  return kept;
}

/** A pool's fold so far: the state, the last state in which it was followed, the events folded. */
export interface Replayed {
  /** without the bookkeeping (withoutBookkeeping) */
  state: PoolState;
  /**
   * The state before the pool last stopped (or the current one while followed): a stopped pool's
   * read-model row keeps the figures it had then, so this is what the row is compared with.
   */
  lastFollowed: FollowedPool | null;
  events: number;
}

export const startReplay = (): Replayed => ({ state: initialState(), lastFollowed: null, events: 0 });

/** One more event folded in. */
export function replayStep(replayed: Replayed, event: PoolEvent): Replayed {
  const before = replayed.state;
  const after = evolve(before, event);
  // Most events leave the bookkeeping as it was (already dropped): no second copy of the state then.
  const untouched =
    after.transfers === before.transfers &&
    after.trades === before.trades &&
    after.payouts === before.payouts &&
    after.openings === undefined &&
    after.closedClaims === undefined;
  const state = untouched ? after : withoutBookkeeping(after);
  return { state, lastFollowed: state.followed ? state : replayed.lastFollowed, events: replayed.events + 1 };
}

/** One line of a pool's history: the event, what it moved, and the pool after it. */
export interface HistoryStep extends PoolHistoryEvent {
  /** 0 for the stream's first event */
  index: number;
  amounts: EventAmounts;
  state: PoolState;
  /** the running figures after the event; null while the pool is not followed */
  figures: PoolFigures | null;
}

/** Every event of the pool with the running state and figures after it, oldest first. */
export function replayHistory(events: readonly PoolHistoryEvent[]): HistoryStep[] {
  const steps: HistoryStep[] = [];
  let state = initialState();
  for (const [index, recorded] of events.entries()) {
    state = evolve(state, recorded.event);
    steps.push({ ...recorded, index, amounts: eventAmounts(recorded.event), state, figures: figuresOf(state) });
  }
  return steps;
}

/**
 * The events that had happened at `at`: the longest prefix, in stream order, of events whose time
 * is not after it. A prefix, not a filter, so that a clock that stepped back between two events can
 * never replay a later event before an earlier one.
 */
export function eventsAsOf<E extends PoolHistoryEvent>(events: readonly E[], at: Date): E[] {
  const limit = at.getTime();
  const end = events.findIndex((e) => Date.parse(e.time) > limit);
  return end < 0 ? [...events] : events.slice(0, end);
}

/** The pool as it was at `at`. */
export const stateAsOf = (events: readonly PoolHistoryEvent[], at: Date): PoolState =>
  eventsAsOf(events, at).reduce((state, e) => evolve(state, e.event), initialState());

/** Whether the stream ever opened a subscription (a stream holding only a rejected credit did not). */
export const everFollowed = (events: readonly PoolHistoryEvent[]): boolean => events.some((e) => e.event.type === 'AgentFollowed');
