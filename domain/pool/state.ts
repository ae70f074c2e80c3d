import { assertNever } from '../shared/decider.ts';
import { PersistentMap } from '../shared/persistent-map.ts';
import type { MicroUsd } from '../shared/money.ts';
import type { Side } from '../trade/events.ts';
import type { WalletContext } from '../wallet/events.ts';
import { timeOf, type AgentTerms, type BridgeStatus, type FollowSettings, type PoolEvent } from './events.ts';
import { changed, changedLedger, withEntry, without } from './copy.ts';
import type { LedgerInputs, ReconciliationStatus } from './ledger.ts';
import { dayOn, utcDateOf, withFlows, withOpen, type TradingDay } from './limits.ts';
import { closed, opened } from './openings.ts';

/** One pool per user, agent and wallet context. */
export const poolId = (userId: string, agentId: string, walletContext: WalletContext): string =>
  `${userId}.${agentId}.${walletContext}`;
export const poolStream = (id: string): string => `pool-${id}`;

/**
 * What the pool decided for a transfer under its id: credited or rejected (a credit to it),
 * pending (waiting for the venue), paid (a debit from it, confirmed), failed (the venue refused;
 * nothing moved). A repeated step finds its fate here and changes nothing.
 */
export type TransferFate = 'credited' | 'rejected' | 'pending' | 'paid' | 'failed';
export type Transfers = PersistentMap<TransferFate>;

/** A movement waiting for the venue: `in` an add the wallet paid, `out` a withdrawal reserved in the pool. */
export interface PendingLeg {
  direction: 'in' | 'out';
  amountMicro: MicroUsd;
}

/** An open trade of the agent in this pool. Trades recorded before signals opened them carry no token, side nor signal. */
export interface PoolTrade {
  marginMicro: MicroUsd;
  unrealizedMicro: MicroUsd;
  token: string | null;
  side: Side | null;
  /** the signal that opened it: a follow-up naming it finds it */
  signalId: string | null;
  openedAt: string;
}

/** What the pool decided for a trade under its id: opened, closed, refused for good (TradeRefused), or executed on paper (TradeSimulated). */
export type TradeFate = 'open' | 'closed' | 'refused' | 'simulated';

/** A movement the venue failed: what did not move, and why (the venue's reason). */
export interface FailedTransfer {
  transferId: string;
  direction: 'in' | 'out';
  amountMicro: MicroUsd;
  reason: string;
  at: string;
}

export interface Reconciliation {
  status: ReconciliationStatus;
  venueEquityMicro: MicroUsd | null;
  venueFreeMarginMicro: MicroUsd | null;
  gapMicro: MicroUsd | null;
}

/** What every pool keeps whether or not it is followed now: its transfers, legs in flight and trades seen. */
interface Book {
  transfers: Transfers;
  pending: Readonly<Record<string, PendingLeg>>;
  /** every trade id the pool has decided: a repeated open or close changes nothing */
  trades: PersistentMap<TradeFate>;
  /** fee settlements so far: the next settlement's id */
  settlements: number;
  /**
   * Every fee this pool stream ever settled, across its openings (the ledger's feesCharged starts
   * again with a new follow): the venue's account for the pool still reflects them all. Absent (0)
   * in states stored before it.
   */
  feesSettledMicro?: MicroUsd;
  /** what the pool paid out per transfer (a reclaim may pay less than asked) */
  payouts: PersistentMap<MicroUsd>;
  /** how many times the pool was followed (opened); absent (0) in states stored before it */
  openings?: number;
  /**
   * The beta seat claims of the openings that closed (domain/agent/seats.ts): spent, no credit can
   * open the pool with them again, so they go back. Absent when none.
   */
  closedClaims?: readonly string[];
}

export interface FollowedPool extends Book {
  followed: true;
  poolId: string;
  agentId: string;
  userId: string;
  walletContext: WalletContext;
  settings: FollowSettings;
  terms: AgentTerms;
  subscribedAt: string;
  /** the time of the last event that changed the subscription record */
  updatedAt: string;
  ledger: LedgerInputs;
  openTrades: Readonly<Record<string, PoolTrade>>;
  /** the UTC day the trade limits count in (limits.ts); absent in states stored before it */
  day?: TradingDay;
  /** the last bridge transfer of a real perp pool */
  bridge: { transferId: string; status: BridgeStatus; transactionId: string | null } | null;
  reconciliation: Reconciliation | null;
  /**
   * The last movement the venue settled, when it failed (null once a later one is confirmed): the
   * record shows it, since a failed withdrawal otherwise only shows as money that stayed. Absent
   * until a movement fails, and in states stored before it.
   */
  lastFailedTransfer?: FailedTransfer | null;
  /** the beta seat claim this opening holds (a beta agent's pool opened since seats are held by claims) */
  seatClaim?: string;
  /**
   * Followed with `goLiveUponConfirmation: false` and not live yet (GoLiveDeferred): signals are
   * skipped until PoolWentLive. Absent: live (every opening recorded before it is).
   */
  awaitingGoLive?: true;
}

/**
 * Never followed, or stopped (`closedAt`): a later follow opens it anew with an empty ledger, but
 * for what the stop left at the venue (`residueMicro`).
 */
export interface UnfollowedPool extends Book {
  followed: false;
  closedAt: string | null;
  /**
   * What a stopped pool still holds at the venue: the part of its closing payout the venue did not
   * pay out (a reclaim for less than asked, or a failed one). A later follow opens with it as
   * confirmed capital (its fees were settled at the stop). Absent (0) in states stored before it.
   */
  residueMicro?: MicroUsd;
}

export type PoolState = UnfollowedPool | FollowedPool;

export const initialState = (): PoolState => ({
  followed: false,
  closedAt: null,
  transfers: PersistentMap.empty(),
  pending: {},
  trades: PersistentMap.empty(),
  settlements: 0,
  payouts: PersistentMap.empty(),
});

/** The change of the pool's day by `change`, when it keeps one. */
const dayChange = (pool: FollowedPool, change: (day: TradingDay) => TradingDay): Partial<FollowedPool> => (pool.day === undefined ? {} : { day: change(pool.day) });

/**
 * The pool with `book` changed, and its ledger by `change` at `at` when followed (an unfollowed one
 * keeps none); the capital it moves is a flow of the day, not a profit or a loss.
 */
function withLedger(state: PoolState, at: string | undefined, change: (l: LedgerInputs) => Partial<LedgerInputs>, book: Partial<Book>): PoolState {
  if (!state.followed) return changed(state, book);
  const ledger = changedLedger(state.ledger, change(state.ledger));
  return changed(state, book, { ledger, updatedAt: at ?? state.updatedAt }, dayChange(state, (day) => withFlows(day, state.ledger, ledger)));
}

/**
 * A followed pool on the day of `event`: an event on a later UTC date starts a new day with the
 * equity before it, which is the equity at 00:00 (equity changes only with events).
 */
function onDayOf(state: PoolState, event: PoolEvent): PoolState {
  if (!state.followed) return state;
  const at = timeOf(event);
  // Most events fall on the day the pool is on: no date to cut out of their time.
  if (at === undefined || (state.day !== undefined && at.startsWith(state.day.date))) return state;
  const date = utcDateOf(at);
  if (date === null) return state;
  const day = dayOn(state.day, date, state.ledger);
  return day === state.day ? state : changed(state, { day });
}

const sumOf = (trades: Readonly<Record<string, PoolTrade>>, field: 'marginMicro' | 'unrealizedMicro'): MicroUsd => {
  let sum = 0;
  for (const id in trades) sum += trades[id]![field];
  return sum;
};

/** The reason a failed movement shows when the venue gave none. */
export const NO_REASON = 'the venue gave no reason';

/** The pool with its last failed movement set, or cleared (null) when it had one. */
const withFailure = (pool: FollowedPool, failure: FailedTransfer | null): FollowedPool =>
  failure === null && !pool.lastFailedTransfer ? pool : changed(pool, { lastFailedTransfer: failure });

export function evolve(before: PoolState, event: PoolEvent): PoolState {
  const state = onDayOf(before, event);
  switch (event.type) {
    case 'AgentFollowed':
      return opened(state, event.data);
    case 'FollowSettingsUpdated': {
      if (!state.followed) return state;
      const { updatedAt, ...settings } = event.data;
      return changed(state, { settings, updatedAt });
    }
    case 'TransferRejected':
      return changed(state, { transfers: state.transfers.set(event.data.transferId, 'rejected') });
    case 'AllocationAdded': {
      const { transferId, amountMicro, at } = event.data;
      return withLedger(state, at, (l) => ({ confirmedIn: l.confirmedIn + amountMicro }), { transfers: state.transfers.set(transferId, 'credited') });
    }
    case 'AllocationPending': {
      const { transferId, amountMicro, at } = event.data;
      return withLedger(state, at, (l) => ({ pendingIn: l.pendingIn + amountMicro }), {
        transfers: state.transfers.set(transferId, 'pending'),
        pending: withEntry(state.pending, transferId, { direction: 'in', amountMicro }),
      });
    }
    case 'WithdrawalRequested': {
      const { transfer, pending, at } = event.data;
      const { transferId, amountMicro } = transfer;
      if (!pending) {
        return withLedger(state, at, (l) => ({ confirmedOut: l.confirmedOut + amountMicro }), {
          transfers: state.transfers.set(transferId, 'paid'),
          payouts: state.payouts.set(transferId, amountMicro),
        });
      }
      return withLedger(state, at, (l) => ({ pendingOut: l.pendingOut + amountMicro }), {
        transfers: state.transfers.set(transferId, 'pending'),
        pending: withEntry(state.pending, transferId, { direction: 'out', amountMicro }),
      });
    }
    case 'AllocationSettled': {
      const { transferId, outcome, amountMicro, at } = event.data;
      const leg = state.pending[transferId];
      if (!leg) return state;
      const confirmed = outcome === 'confirmed';
      const fate: TransferFate = !confirmed ? 'failed' : leg.direction === 'in' ? 'credited' : 'paid';
      const payouts = fate === 'paid' ? state.payouts.set(transferId, amountMicro) : state.payouts;
      const moved = (l: LedgerInputs): Partial<LedgerInputs> =>
        leg.direction === 'in'
          ? { pendingIn: l.pendingIn - leg.amountMicro, confirmedIn: l.confirmedIn + (confirmed ? amountMicro : 0) }
          : { pendingOut: l.pendingOut - leg.amountMicro, confirmedOut: l.confirmedOut + (confirmed ? amountMicro : 0) };
      const settled = withLedger(state, at, moved, { transfers: state.transfers.set(transferId, fate), pending: without(state.pending, transferId), payouts });
      if (settled.followed) return withFailure(settled, confirmed ? null : { transferId, direction: leg.direction, amountMicro: leg.amountMicro, reason: event.data.reason ?? NO_REASON, at });
      // A stopped pool's closing payout: what the venue did not pay out stays the pool's.
      if (leg.direction !== 'out') return settled;
      return changed(settled, { residueMicro: (settled.residueMicro ?? 0) + leg.amountMicro - (confirmed ? amountMicro : 0) });
    }
    case 'BridgeStatusChanged': {
      if (!state.followed) return state;
      const { transferId, status, bridgeTransactionId, at } = event.data;
      return changed(state, { bridge: { transferId, status, transactionId: bridgeTransactionId }, updatedAt: at });
    }
    case 'TradeOpened': {
      const { tradeId, marginMicro, at, token, side, signalId } = event.data;
      const trades = state.trades.set(tradeId, 'open' as const);
      if (!state.followed) return changed(state, { trades });
      const trade: PoolTrade = { marginMicro, unrealizedMicro: 0, token: token ?? null, side: side ?? null, signalId: signalId ?? null, openedAt: at };
      const openTrades = withEntry(state.openTrades, tradeId, trade);
      const ledger = changedLedger(state.ledger, { locked: sumOf(openTrades, 'marginMicro') });
      return changed(state, { trades, openTrades, ledger, updatedAt: at }, dayChange(state, (day) => withOpen(day, at)));
    }
    // Changes no money and no record: only the trade's fate, so that the refusal is final.
    case 'TradeRefused':
      return changed(state, { trades: state.trades.set(event.data.tradeId, 'refused' as const) });
    // A paper execution: final for its id as a refusal is; no money, no limit counts it.
    case 'TradeSimulated':
      return changed(state, { trades: state.trades.set(event.data.tradeId, 'simulated' as const) });
    case 'GoLiveDeferred':
      return state.followed ? changed(state, { awaitingGoLive: true, updatedAt: event.data.at }) : state;
    case 'PoolWentLive': {
      if (!state.followed) return state;
      const live = changed(state, { updatedAt: event.data.at });
      delete live.awaitingGoLive;
      return live;
    }
    case 'TradeMarked': {
      if (!state.followed) return state;
      const { tradeId, unrealizedPnlMicro, at } = event.data;
      const trade = state.openTrades[tradeId];
      if (!trade) return state;
      const { marginMicro, token, side, signalId, openedAt } = trade;
      const openTrades = withEntry(state.openTrades, tradeId, { marginMicro, unrealizedMicro: unrealizedPnlMicro, token, side, signalId, openedAt });
      return changed(state, { openTrades, ledger: changedLedger(state.ledger, { unrealized: sumOf(openTrades, 'unrealizedMicro') }), updatedAt: at });
    }
    case 'TradeClosed': {
      const { tradeId, realizedPnlMicro, at } = event.data;
      const trades = state.trades.set(tradeId, 'closed' as const);
      if (!state.followed) return changed(state, { trades });
      const openTrades = without(state.openTrades, tradeId);
      const ledger = changedLedger(state.ledger, {
        realized: state.ledger.realized + realizedPnlMicro,
        locked: sumOf(openTrades, 'marginMicro'),
        unrealized: sumOf(openTrades, 'unrealizedMicro'),
      });
      return changed(state, { trades, openTrades, ledger, updatedAt: at });
    }
    case 'FeesSettled': {
      const { feeMicro, at } = event.data;
      return withLedger(state, at, (l) => ({ feesCharged: l.feesCharged + feeMicro }), {
        settlements: state.settlements + 1,
        feesSettledMicro: (state.feesSettledMicro ?? 0) + feeMicro,
      });
    }
    case 'PoolClosed':
      return closed(state, event.data);
    case 'ReconciliationObserved': {
      if (!state.followed) return state;
      const { status, venueEquityMicro, venueFreeMarginMicro, gapMicro } = event.data;
      return changed(state, { reconciliation: { status, venueEquityMicro, venueFreeMarginMicro, gapMicro } });
    }
    default:
      return assertNever(event);
  }
}
