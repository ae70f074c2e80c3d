import { assertNever } from '../shared/decider.ts';
import { PersistentMap } from '../shared/persistent-map.ts';
import type { MicroUsd } from '../shared/money.ts';
import type { WalletContext } from '../wallet/events.ts';
import { timeOf, type PoolEvent } from './events.ts';
import { changed, changedLedger, withEntry, without } from './copy.ts';
import type { LedgerInputs } from './ledger.ts';
import { dayOn, utcDateOf, withFlows, withOpen } from './limits.ts';
import { closed, opened } from './openings.ts';
import type { Book, FailedTransfer, FollowedPool, PoolState, PoolTrade, TradingDay, TransferFate } from './pool.ts';

export type {
  FailedTransfer,
  FollowedPool,
  PendingLeg,
  PoolState,
  PoolTrade,
  Reconciliation,
  TradeFate,
  TransferFate,
  Transfers,
  UnfollowedPool,
} from './pool.ts';

/** One pool per user, agent and wallet context. */
export const poolId = (userId: string, agentId: string, walletContext: WalletContext): string => `${userId}.${agentId}.${walletContext}`;
export const poolStream = (id: string): string => `pool-${id}`;

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
const dayChange = (pool: FollowedPool, change: (day: TradingDay) => TradingDay): Partial<FollowedPool> =>
  pool.day === undefined ? {} : { day: change(pool.day) };

/**
 * The pool with `book` changed, and its ledger by `change` at `at` when followed (an unfollowed one
 * keeps none); the capital it moves is a flow of the day, not a profit or a loss.
 */
function withLedger(state: PoolState, at: string | undefined, change: (l: LedgerInputs) => Partial<LedgerInputs>, book: Partial<Book>): PoolState {
  if (!state.followed) return changed(state, book);
  const ledger = changedLedger(state.ledger, change(state.ledger));
  return changed(
    state,
    book,
    { ledger, updatedAt: at ?? state.updatedAt },
    dayChange(state, (day) => withFlows(day, state.ledger, ledger)),
  );
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
      if (settled.followed)
        return withFailure(
          settled,
          confirmed ? null : { transferId, direction: leg.direction, amountMicro: leg.amountMicro, reason: event.data.reason ?? NO_REASON, at },
        );
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
      return changed(
        state,
        { trades, openTrades, ledger, updatedAt: at },
        dayChange(state, (day) => withOpen(day, at)),
      );
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
