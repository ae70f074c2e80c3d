// A statement's pure part (docs/decisions.md, "Signed statements"): one pool, and the wallet, as they
// were at a point in time, replayed from their events with the domain's own folds (history.ts,
// receipts.ts, domain/wallet/state.ts): the state at `at`, the ledger's lines since `from`, the fee
// receipts settled in that range and the pool's equity over it. Money stays integer micro-USD.
import type { MicroUsd } from '../shared/money.ts';
import { balanceOf, evolve as evolveWallet, initialState as initialWallet, type WalletState } from '../wallet/state.ts';
import { walletContexts, type WalletContext, type WalletEvent } from '../wallet/events.ts';
import { eventAmounts, eventsAsOf, figuresOf, type HistoryStep, type PoolHistoryEvent } from './history.ts';
import { equityUsd, pendingSuccessFeeUsd, splitFee } from './ledger.ts';
import { servesPeriod, type PoolFoldSnapshot } from './fold-snapshot.ts';
import { feeReceipts, type FeeReceipt } from './receipts.ts';
import { evolve, initialState, type PoolState } from './state.ts';

export type GlobalPosition = NonNullable<PoolHistoryEvent['position']>;

/** One point of the equity line: the pool's equity (ledger.ts, equityUsd) after the events up to `time`. */
export interface EquityPoint {
  time: string;
  equity: MicroUsd;
}

export interface PoolStatement {
  /** the pool at `at` */
  state: PoolState;
  /** the events replayed (those up to `at`) */
  events: number;
  /** the position of the last event replayed; null when none */
  position: GlobalPosition | null;
  /** the ledger's lines whose time is at or after `from` (all without `from`) */
  lines: HistoryStep[];
  /** the settlements among those lines, keyed by the line's index */
  receipts: Map<number, FeeReceipt>;
  /** success fees settled from the pool in the range, and what is pending at `at` (realized, not yet settled) */
  fees: { charged: MicroUsd; pending: MicroUsd };
  /** the equity at `from`, after each line while followed, and at `at` */
  equity: EquityPoint[];
}

const equityOf = (state: PoolState): MicroUsd | null => (state.followed ? equityUsd(state.ledger) : null);

function equityLine(before: PoolState, lines: HistoryStep[], from: string, at: string): EquityPoint[] {
  const points: EquityPoint[] = [];
  const push = (time: string, equity: MicroUsd | null) => {
    if (equity !== null) points.push({ time, equity });
  };
  push(from, equityOf(before));
  for (const line of lines) push(line.time, equityOf(line.state));
  push(at, equityOf(lines.at(-1)?.state ?? before));
  return points;
}

/** The history steps of `events[start..]` folded on from `state` (replayHistory's steps, from a state folded before them), indexed from `offset`. */
function stepsFrom(events: readonly PoolHistoryEvent[], start: number, state: PoolState, offset: number): HistoryStep[] {
  const steps: HistoryStep[] = [];
  for (let index = start; index < events.length; index++) {
    const recorded = events[index]!;
    state = evolve(state, recorded.event);
    steps.push({ ...recorded, index: offset + index, amounts: eventAmounts(recorded.event), state, figures: figuresOf(state) });
  }
  return steps;
}

/**
 * The pool as it was at `at`, with what happened in [`from`, `at`]. `from` defaults to the pool's
 * first event. The pool's events must be its whole history, oldest first (receipts count high-water
 * marks from the first opening), or, resumed from a `snapshot` that serves the period
 * (fold-snapshot.ts servesPeriod), the history after the snapshot's event: the statement is the
 * same. Only the lines in the range are kept with their states: the events before `from` are folded without.
 */
export function poolStatement(history: readonly PoolHistoryEvent[], at: Date, from: Date | null, snapshot?: PoolFoldSnapshot): PoolStatement {
  if (snapshot && !servesPeriod(snapshot, at, from))
    throw new Error(`a snapshot at revision ${snapshot.revision} does not serve a statement from ${from?.toISOString()}`);
  const offset = snapshot ? snapshot.revision + 1 : 0;
  const upToAt = eventsAsOf(history, at);
  const first = from ? upToAt.findIndex((e) => Date.parse(e.time) >= from.getTime()) : 0;
  const start = first < 0 ? upToAt.length : first;
  let before = snapshot?.state ?? initialState();
  for (let i = 0; i < start; i++) before = evolve(before, upToAt[i]!.event);
  const lines = stepsFrom(upToAt, start, before, offset);
  const receiptsStart = { offset, highWaterMark: snapshot?.highWaterMark ?? 0 };
  const receipts = new Map([...feeReceipts(upToAt, receiptsStart)].filter(([index]) => index >= offset + start));
  const state = lines.at(-1)?.state ?? before;
  const pending = state.followed ? splitFee(pendingSuccessFeeUsd(state.ledger, state.terms.successFeePercent)) : { platform: 0, creator: 0 };
  const atText = at.toISOString();
  return {
    state,
    events: offset + upToAt.length,
    position: upToAt.at(-1)?.position ?? snapshot?.position ?? null,
    lines,
    receipts,
    fees: { charged: [...receipts.values()].reduce((sum, r) => sum + r.fee, 0), pending: pending.platform + pending.creator },
    equity: equityLine(before, lines, from?.toISOString() ?? lines[0]?.time ?? atText, atText),
  };
}

/** A recorded wallet event as the statement replays it. */
export interface WalletHistoryEvent {
  time: string;
  event: WalletEvent;
  position?: GlobalPosition;
}

export interface WalletStatement {
  state: WalletState;
  /** each context's balance at `at` (a wallet never used: the virtual start, as the domain's balanceOf says) */
  balances: Record<WalletContext, MicroUsd>;
  events: number;
  position: GlobalPosition | null;
}

/** The wallet as it was at `at`: its events up to then, folded (a prefix, as eventsAsOf takes it). */
export function walletStatement(history: readonly WalletHistoryEvent[], at: Date, virtualStartMicro: MicroUsd): WalletStatement {
  const end = history.findIndex((e) => Date.parse(e.time) > at.getTime());
  const upToAt = end < 0 ? history : history.slice(0, end);
  const state = upToAt.reduce((s, e) => evolveWallet(s, e.event), initialWallet());
  const balances = Object.fromEntries(walletContexts.map((c) => [c, balanceOf(state, c, virtualStartMicro)])) as Record<WalletContext, MicroUsd>;
  return { state, balances, events: upToAt.length, position: upToAt.at(-1)?.position ?? null };
}

const compare = (a: GlobalPosition, b: GlobalPosition): number => {
  const commit = BigInt(a.commit) - BigInt(b.commit);
  if (commit !== 0n) return commit < 0n ? -1 : 1;
  const prepare = BigInt(a.prepare) - BigInt(b.prepare);
  return prepare === 0n ? 0 : prepare < 0n ? -1 : 1;
};

/** The latest of the positions the statement was computed at: every event replayed is at or before it. */
export const latestPosition = (positions: ReadonlyArray<GlobalPosition | null>): GlobalPosition | null =>
  positions.reduce<GlobalPosition | null>((latest, p) => (p && (!latest || compare(p, latest) > 0) ? p : latest), null);
