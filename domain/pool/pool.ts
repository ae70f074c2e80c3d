// The shape of a pool's state (the fold is state.ts): types only, so the pool's helpers (copy.ts,
// limits.ts, openings.ts) name the state without importing its fold, which imports them.
import type { PersistentMap } from '../shared/persistent-map.ts';
import type { MicroUsd } from '../shared/money.ts';
import type { Side } from '../trade/events.ts';
import type { WalletContext } from '../wallet/events.ts';
import type { BridgeStatus } from './events.ts';
import type { LedgerInputs, ReconciliationStatus } from './ledger.ts';
import type { AgentTerms, FollowSettings } from './settings.ts';

/** The UTC day the per-day limits count in, kept by the pool's fold (state.ts). */
export interface TradingDay {
  /** YYYY-MM-DD, UTC */
  date: string;
  /** the equity when the day started: before its first event, which is the equity at 00:00 */
  startEquityMicro: MicroUsd;
  /** capital added − capital withdrawn (and success fees settled) since */
  flowsMicro: MicroUsd;
  /** trades opened this day */
  opens: number;
  /** the last open, this day or before: the cooldown spans midnight */
  lastOpenAt: string | null;
}

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
export interface Book {
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
