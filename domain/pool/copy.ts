// Copies of a pool state made by one object literal per kind of state, not by a spread. On Node 20
// a spread of the twenty-field followed state costs about half a microsecond, a literal a few tens
// of nanoseconds; `evolve` copies the state for nearly every event it folds (a projector catching
// up, the auditors' replay of a million events), so the spread was most of the fold's time.
// A state's required fields are checked by the literals' types; its optional ones are copied only
// when present, as a spread does (test/domain/pool/copy.test.ts checks a copy against a spread).
import type { LedgerInputs } from './ledger.ts';
import type { FollowedPool, PoolState, UnfollowedPool } from './state.ts';

function copyFollowed(s: FollowedPool): FollowedPool {
  const copy: FollowedPool = {
    followed: s.followed,
    poolId: s.poolId,
    agentId: s.agentId,
    userId: s.userId,
    walletContext: s.walletContext,
    settings: s.settings,
    terms: s.terms,
    subscribedAt: s.subscribedAt,
    updatedAt: s.updatedAt,
    ledger: s.ledger,
    openTrades: s.openTrades,
    bridge: s.bridge,
    reconciliation: s.reconciliation,
    transfers: s.transfers,
    pending: s.pending,
    trades: s.trades,
    settlements: s.settlements,
    payouts: s.payouts,
  };
  if (s.feesSettledMicro !== undefined) copy.feesSettledMicro = s.feesSettledMicro;
  if (s.day !== undefined) copy.day = s.day;
  return copy;
}

function copyUnfollowed(s: UnfollowedPool): UnfollowedPool {
  const copy: UnfollowedPool = {
    followed: s.followed,
    closedAt: s.closedAt,
    transfers: s.transfers,
    pending: s.pending,
    trades: s.trades,
    settlements: s.settlements,
    payouts: s.payouts,
  };
  if (s.feesSettledMicro !== undefined) copy.feesSettledMicro = s.feesSettledMicro;
  if (s.residueMicro !== undefined) copy.residueMicro = s.residueMicro;
  return copy;
}

/** A new state: `state` with the fields of `changes` (later ones win); `state` is unchanged. */
export function changed<S extends PoolState>(state: S, ...changes: Array<Partial<S>>): S {
  const copy = state.followed ? copyFollowed(state) : copyUnfollowed(state);
  return Object.assign(copy, ...changes) as S;
}

/** A new ledger: `ledger` with the fields of `change`. */
export function changedLedger(ledger: LedgerInputs, change: Partial<LedgerInputs>): LedgerInputs {
  const copy: LedgerInputs = {
    confirmedIn: ledger.confirmedIn,
    confirmedOut: ledger.confirmedOut,
    realized: ledger.realized,
    unrealized: ledger.unrealized,
    locked: ledger.locked,
    pendingIn: ledger.pendingIn,
    pendingOut: ledger.pendingOut,
    feesCharged: ledger.feesCharged,
  };
  return Object.assign(copy, change);
}
