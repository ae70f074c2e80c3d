// Copies of a pool state made by one object literal per kind of state, not by a spread. On Node 20
// a spread of the twenty-field followed state costs about half a microsecond, a literal a few tens
// of nanoseconds; `evolve` copies the state for nearly every event it folds (a projector catching
// up, the auditors' replay of a million events), so the spread was most of the fold's time.
// A state's required fields are checked by the literals' types; its optional ones are copied only
// when present, as a spread does (test/domain/pool/copy.test.ts checks a copy against a spread).
import type { LedgerInputs } from './ledger.ts';
import type { FollowedPool, PoolState, UnfollowedPool } from './pool.ts';

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
  if (s.lastFailedTransfer !== undefined) copy.lastFailedTransfer = s.lastFailedTransfer;
  if (s.seatClaim !== undefined) copy.seatClaim = s.seatClaim;
  if (s.openings !== undefined) copy.openings = s.openings;
  if (s.closedClaims !== undefined) copy.closedClaims = s.closedClaims;
  if (s.awaitingGoLive !== undefined) copy.awaitingGoLive = s.awaitingGoLive;
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
  if (s.openings !== undefined) copy.openings = s.openings;
  if (s.closedClaims !== undefined) copy.closedClaims = s.closedClaims;
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

// Records keyed by transfer and trade ids are copied into objects without a prototype, which V8
// keeps as dictionaries. A spread adding a new id made a new hidden class for every event (ids are
// unique), and folding a million pool events spent most of its time creating and collecting them.
// Copied key by key: Object.assign into a dictionary, and Object.values over one, take V8's
// generic paths (about three times the time of these loops, on records of a few entries).
const dictionaryOf = <T>(record: Readonly<Record<string, T>>): Record<string, T> => {
  const copy = Object.create(null) as Record<string, T>;
  for (const key in record) copy[key] = record[key]!;
  return copy;
};

/** A copy of `record` with `key` set to `value`. */
export const withEntry = <T>(record: Readonly<Record<string, T>>, key: string, value: T): Record<string, T> => {
  const copy = dictionaryOf(record);
  copy[key] = value;
  return copy;
};

/** A copy of `record` without `key`. */
export const without = <T>(record: Readonly<Record<string, T>>, key: string): Record<string, T> => {
  const copy = dictionaryOf(record);
  delete copy[key];
  return copy;
};
