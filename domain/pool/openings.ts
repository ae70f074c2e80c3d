// How the pool state opens with a follow and closes with a stop (evolve's AgentFollowed and
// PoolClosed): what a pool keeps across its openings (transfers, legs in flight, trades, fees
// settled, the count of openings and the seat claims of those that closed) and what starts anew.
import type { PoolEventOf } from './events.ts';
import { emptyLedger } from './ledger.ts';
import { dayOn, utcDateOf } from './limits.ts';
import type { FollowedPool, PoolState, UnfollowedPool } from './pool.ts';

/** The pool opened by a follow: an empty ledger but for what a stop left at the venue. */
export function opened(state: PoolState, data: PoolEventOf<'AgentFollowed'>['data']): FollowedPool {
  const { poolId: id, agentId, userId, walletContext, terms, subscribedAt, walletMode: _alias, seatClaim, ...settings } = data;
  const ledger = { ...emptyLedger(), confirmedIn: state.followed ? 0 : (state.residueMicro ?? 0) };
  const date = utcDateOf(subscribedAt);
  const pool: FollowedPool = {
    followed: true,
    poolId: id,
    agentId,
    userId,
    walletContext,
    settings,
    terms,
    subscribedAt,
    updatedAt: subscribedAt,
    ledger,
    openTrades: {},
    bridge: null,
    reconciliation: null,
    transfers: state.transfers,
    pending: state.pending,
    trades: state.trades,
    settlements: state.settlements,
    feesSettledMicro: state.feesSettledMicro ?? 0,
    payouts: state.payouts,
  };
  if (date !== null) pool.day = dayOn(undefined, date, ledger);
  pool.openings = (state.openings ?? 0) + 1;
  if (seatClaim !== undefined) pool.seatClaim = seatClaim;
  if (state.closedClaims !== undefined) pool.closedClaims = state.closedClaims;
  return pool;
}

/** The pool stopped: its opening's seat claim joins those that closed. */
export function closed(state: PoolState, data: PoolEventOf<'PoolClosed'>['data']): UnfollowedPool {
  const { trades, settlements } = state;
  const { at, transferId } = data;
  // A stop with nothing to pay out is decided too: paid, 0 (its payout, if any, was recorded first).
  const decided = transferId === undefined || state.transfers.has(transferId);
  const transfers = decided ? state.transfers : state.transfers.set(transferId, 'paid' as const);
  const payouts = decided ? state.payouts : state.payouts.set(transferId, 0);
  const pool: UnfollowedPool = {
    followed: false,
    closedAt: at,
    transfers,
    pending: state.pending,
    trades,
    settlements,
    payouts,
    feesSettledMicro: state.feesSettledMicro ?? 0,
  };
  if (state.openings !== undefined) pool.openings = state.openings;
  const claims = state.followed && state.seatClaim !== undefined ? [...(state.closedClaims ?? []), state.seatClaim] : state.closedClaims;
  if (claims !== undefined) pool.closedClaims = claims;
  return pool;
}
