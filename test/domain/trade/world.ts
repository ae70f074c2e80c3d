// A pure in-memory world of one followed pool and its agent trades, for the trades-as-transfers
// property test (transfers.test.ts). The pool lives in the pool ledger's world (../pool/world.ts:
// the wallet, the pool decider, its own checks of every pool decision and of money conserved
// between wallet, pool and fees); this world adds the trade streams (the real trade decider), a
// price per token and a clock, and runs the trade transfers as the command layer does:
// - a signal's opens as commands/signals/execute.ts's openTrades: one pool `OpenTrade` group, then
//   one transfer per trade from the pool's recorded plan (TradeOpened.transfer), and the trades that
//   opened closed at once at the mark when another of the group could not (both or neither);
// - a command on one trade as commands/trades/manage.ts's manageTrade: the trade decides, a
//   TradeSettled runs the return transfer (tradeReturnPlan), an open trade's mark goes to the pool;
// - every step as commands/transfers/steps.ts performs it (LockMargin, OpenTradeEntry,
//   ReleaseMargin, DebitTrade, ReturnMargin), through the real process (domain/transfer/process.ts);
// - crashes: the k-th transfer of an action stops after s steps (the last one appended, its outcome
//   lost, the process gone), then either the recovery worker resumes every recorded plan (the pool's
//   TradeOpened.transfer, the trade's TradeSettled) or the signal job runs again (a repeated group
//   is decided by its record); steps are sometimes delivered twice.
// Invariants are checked after every step (TradeWorld.check) and once everything is finished
// (TradeWorld.checkDrained); each is stated where it is checked.
import assert from 'node:assert/strict';
import type { SignalExecutionDefaults } from '../../../domain/agent/record.ts';
import type { PoolCommand } from '../../../domain/pool/decide.ts';
import type { AgentTerms, PoolEvent } from '../../../domain/pool/events.ts';
import { currentBalanceUsd } from '../../../domain/pool/ledger.ts';
import { tradeLimitsOf } from '../../../domain/pool/limits.ts';
import { poolId, type FollowedPool, type PoolState } from '../../../domain/pool/state.ts';
import type { OpenTrade } from '../../../domain/pool/trades.ts';
import type { CommandBody } from '../../../domain/shared/decider.ts';
import { DomainError, refuse } from '../../../domain/shared/errors.ts';
import { percentFraction } from '../../../domain/shared/money.ts';
import { tradeOrderOf } from '../../../domain/signal/execution.ts';
import type { OpenIntent } from '../../../domain/signal/intent.ts';
import { tradeDecider, type Trade, type TradeCommand, type TradeEvent, type TradeState } from '../../../domain/trade/decide.ts';
import { marginFor } from '../../../domain/trade/maths.ts';
import { poolEndpointOf, tradeReturnPlan, type TradeEndpoint, type TransferPlan } from '../../../domain/transfer/plan.ts';
import { decide, evolve, isFinished, planned, resumed, type TransferOutcome, type TransferState, type TransferStep } from '../../../domain/transfer/process.ts';
import type { WalletContext } from '../../../domain/wallet/events.ts';
import { at } from '../../support/given-when-then.ts';
import { settings, terms as spotTerms } from '../pool/fixtures.ts';
import { reached as poolPaths, START, USER, World } from './pool-world.ts';
import { priceFromMicro } from '../../../domain/shared/price.ts';
import { requestOfStored } from '../../../domain/trade/commands.ts';

export const AGENT = 'agent-signals';
/** TRADE_FEE_BPS, the simulated venue's fee on entry and every exit */
export const FEE_BPS = 5;
/** The world's clock starts where the pool world's steps are dated. */
export const T0 = Date.parse('2025-03-04T05:06:07.000Z');
/** Tokens and their first mark (micro-USD per whole token); XYZ has none: its trades cannot open. */
export const TOKENS: ReadonlyArray<{ symbol: string; priceMicro: number | null }> = [
  { symbol: 'SOL', priceMicro: 150_000_000 },
  { symbol: 'BTC', priceMicro: 60_000_000_000 },
  { symbol: 'XYZ', priceMicro: null },
];

/** A perp agent: leverage up to 10, a 20 % success fee, at most 4 open trades, 1 USD the smallest margin. */
export const perpTerms: AgentTerms = {
  ...spotTerms,
  agentName: 'Perp Signals',
  venue: 'PERP_VENUE',
  maxLeverage: 10,
  successFeePercent: 20,
  minTradeUsd: 1_000_000,
  maxConcurrentPositions: 4,
  recommendedPerTradePercent: 10,
};

/** What the random runs went through, counted across all runs: a path never reached fails the test. */
export const paths = {
  groupOpened: 0,
  groupOfTwoOpened: 0,
  openedByPercent: 0,
  refusedCapital: 0,
  refusedOtherLimit: 0,
  filledAtOnce: 0,
  entryPending: 0,
  filledOnTick: 0,
  expired: 0,
  cancelled: 0,
  targetHit: 0,
  reduced: 0,
  closedStop: 0,
  closedTarget: 0,
  closedTrailing: 0,
  closedBreakeven: 0,
  closedBySignal: 0,
  closedByUser: 0,
  closedWithProfit: 0,
  closedWithLoss: 0,
  lostWholeMargin: 0,
  rejectedInvalidLevels: 0,
  rejectedNoMark: 0,
  rejectedExpiredRequest: 0,
  undoneBothOrNeither: 0,
  followUpRefused: 0,
  poolMarked: 0,
  crashed: 0,
  crashedOpen: 0,
  crashedReturn: 0,
  resumedByWorker: 0,
  resumedByJob: 0,
  finishedResumedAgain: 0,
  stepTwice: 0,
  withdrawn: 0,
  feesSettled: 0,
};
type Paths = typeof paths;

/** The process died: what it appended stays, what it was about to do is left to a retry or the recovery. */
export class Crash extends Error {}

/** Faults of one action: the `index`-th transfer it runs stops after `after` steps; `twice`: every step delivered twice. */
export interface Faults {
  crash: { index: number; after: number } | null;
  twice: boolean;
}
const noFaults: Faults = { crash: null, twice: false };

/** One signal's opens in the pool: the group the pool decided, and whether its execution was cut short. */
export interface Group {
  tradeIds: string[];
  data: OpenTrade['data'];
  interrupted: boolean;
}

/** A trade that was requested (not none, not rejected). */
const requested = (s: TradeState): s is Trade => s.status !== 'none' && s.status !== 'rejected';
export const live = (s: TradeState): s is Trade => s.status === 'pending' || s.status === 'open';
export const ended = (s: TradeState): s is Trade => s.status === 'closed' || s.status === 'cancelled' || s.status === 'expired';

/** Asserts `cond`; the message is built only on a failure (the checks run after every step). */
export function ensure(cond: boolean, message: () => string): asserts cond {
  if (!cond) assert.fail(message());
}

/** Asserts `actual === expected`, naming both; the message is built only on a failure. */
export function same<T>(actual: T, expected: T, message: () => string): void {
  if (actual !== expected) assert.fail(`${message()}: ${String(actual)} !== ${String(expected)}`);
}

const outcomeKey = (o: TransferOutcome) => (o.type === 'DebitRefused' ? { type: o.type, reason: o.error.reason } : o);

const tradeEndpoint = (plan: TransferPlan, side: 'from' | 'to'): TradeEndpoint => {
  const e = plan[side];
  if (e.kind !== 'trade') throw new Error(`transfer ${plan.transferId}: the ${side} endpoint is not a trade`);
  return e;
};

export class TradeWorld {
  /** the wallet and the pool, with the pool world's own checks */
  readonly w: World;
  readonly poolId: string;
  now = T0;
  readonly prices = new Map<string, number>();
  readonly trades = new Map<string, TradeState>();
  readonly tradeEvents = new Map<string, TradeEvent[]>();
  /** the process state each trade transfer was last left in by this world's runner, or 'crashed' */
  readonly transfers = new Map<string, TransferState | 'crashed'>();
  readonly groups: Group[] = [];
  /** events appended to the pool and trade streams by this world (a repeated step must add none) */
  appended = 0;
  /** the highest realized PnL the pool ever had: what success fees may be charged on */
  peakRealized = 0;
  private signals = 0;
  private faults: Faults = noFaults;
  private runs = 0;

  constructor(
    readonly walletContext: WalletContext,
    readonly capitalMicro: number,
    readonly defaults: SignalExecutionDefaults,
    readonly seen: Paths = paths,
  ) {
    this.w = new World(Object.fromEntries(Object.keys(poolPaths).map((k) => [k, 0])) as typeof poolPaths);
    this.poolId = poolId(USER, AGENT, walletContext);
    for (const t of TOKENS) if (t.priceMicro !== null) this.prices.set(t.symbol, t.priceMicro);
    // The pool's capital: a follow's transfer from the wallet (real: a deposit first, then the venue confirms the add).
    if (walletContext === 'real') {
      this.w.executeWallet({ type: 'DepositWallet', data: { depositId: 'deposit-1', amountMicro: capitalMicro, virtualStartMicro: START }, metadata: this.meta() });
    } else {
      assert.ok(capitalMicro <= START);
    }
    const add: TransferPlan = {
      transferId: `${this.poolId}#add-1`,
      amountMicro: capitalMicro,
      from: { kind: 'wallet', userId: USER, walletContext },
      to: { kind: 'pool', userId: USER, agentId: AGENT, walletContext, follow: { settings, terms: perpTerms } },
    };
    const { end } = this.w.run(planned(add));
    if (walletContext === 'real') {
      same(end?.status, 'pending', () => 'a real add waits for the venue');
      this.w.settle(this.poolId, add.transferId, 'confirmed', capitalMicro);
    } else {
      same(end?.status, 'completed', () => 'a virtual add completes');
    }
    same(this.pool().ledger.confirmedIn, capitalMicro, () => 'the pool holds its capital');
    this.check('funded');
  }

  meta() {
    return at(new Date(this.now), 'system:test');
  }

  pool(): FollowedPool {
    const p: PoolState = this.w.pool(this.poolId);
    assert.ok(p.followed, 'the pool stays followed');
    return p;
  }

  trade(tradeId: string): TradeState {
    return this.trades.get(tradeId) ?? tradeDecider.initialState();
  }

  poolEvents(): PoolEvent[] {
    return this.w.poolEvents.get(this.poolId) ?? [];
  }

  /**
   * Whether an open trade of the pool is marked at a loss larger than its margin, which it can never
   * realize: the pool would then owe less success fee than it will, and count more capital free
   * than it has (transfers.test.ts asserts it never happens: the fee was once forgiven at the stop).
   */
  markedPastItsMargin(): boolean {
    return Object.values(this.pool().openTrades).some((trade) => trade.unrealizedMicro < -trade.marginMicro);
  }

  /** The trades of the pool: live (pending/open) ones, by token when given. */
  liveTrades(token?: string): string[] {
    return [...this.trades].filter(([, s]) => live(s) && (token === undefined || s.token === token)).map(([id]) => id);
  }

  /** Runs `work` under `faults`; a crash ends the work (the process died) and is reported. */
  withFaults(faults: Faults, work: () => void): boolean {
    this.faults = faults;
    this.runs = 0;
    try {
      work();
      return true;
    } catch (err) {
      if (err instanceof Crash) return false;
      throw err;
    } finally {
      this.faults = noFaults;
    }
  }

  // ---- the aggregates ----

  executePool(command: CommandBody<PoolCommand>): { state: PoolState; events: PoolEvent[] } {
    const result = this.w.executePool(this.poolId, { ...command, metadata: this.meta() } as PoolCommand);
    this.appended += result.events.length;
    return result;
  }

  /** A trade command decided on the trade's stream; the trade's own facts are checked as they are appended. */
  executeTrade(tradeId: string, body: CommandBody<TradeCommand>): { state: TradeState; events: TradeEvent[] } {
    const before = this.trade(tradeId);
    const events = tradeDecider.decide({ ...body, metadata: this.meta() } as TradeCommand, before);
    const state = events.reduce(tradeDecider.evolve, before);
    const recorded = this.tradeEvents.get(tradeId) ?? [];
    this.tradeEvents.set(tradeId, recorded);
    recorded.push(...events);
    this.trades.set(tradeId, state);
    this.appended += events.length;
    this.count(before, state, events);
    return { state, events };
  }

  private count(before: TradeState, after: TradeState, events: TradeEvent[]): void {
    const seen = this.seen;
    for (const e of events) {
      switch (e.type) {
        case 'TradeFilled':
          if (before.status === 'none') seen.filledAtOnce++;
          else seen.filledOnTick++;
          break;
        case 'EntryPending':
          seen.entryPending++;
          break;
        case 'EntryExpired':
          seen.expired++;
          break;
        case 'EntryCancelled':
          seen.cancelled++;
          break;
        case 'TargetHit':
          seen.targetHit++;
          break;
        case 'TradeReduced':
          seen.reduced++;
          break;
        case 'TradeClosed': {
          const r = e.data.reason;
          if (r === 'STOP_LOSS') seen.closedStop++;
          if (r === 'TAKE_PROFIT') seen.closedTarget++;
          if (r === 'TRAILING_STOP') seen.closedTrailing++;
          if (r === 'BREAKEVEN_STOP') seen.closedBreakeven++;
          if (r === 'SIGNAL') seen.closedBySignal++;
          if (r === 'USER') seen.closedByUser++;
          break;
        }
        case 'TradeSettled':
          if (e.data.realizedPnlMicro > 0) seen.closedWithProfit++;
          if (e.data.realizedPnlMicro < 0) seen.closedWithLoss++;
          if (e.data.returnedMicro === 0) seen.lostWholeMargin++;
          break;
        case 'TradeRejected':
          if (e.data.reason === 'INVALID_LEVELS') seen.rejectedInvalidLevels++;
          if (e.data.reason === 'NO_MARK_PRICE') seen.rejectedNoMark++;
          if (e.data.message.includes('expiresAt')) seen.rejectedExpiredRequest++;
          break;
      }
    }
    if (requested(after)) {
      for (const e of events) {
        // What a trade pays back is its margin and the PnL it realized, never less than nothing.
        if (e.type === 'TradeClosed') same(e.data.totalRealizedPnlMicro, after.realizedPnlMicro, () => `${after.tradeId}: the close carries the trade's realized PnL`);
        if (e.type === 'TradeSettled') {
          const margin = marginFor(after.notionalMicro, after.leverage);
          same(e.data.marginMicro, margin, () => `${after.tradeId}: the settlement's margin`);
          same(e.data.realizedPnlMicro, after.realizedPnlMicro, () => `${after.tradeId}: the settlement's PnL`);
          same(e.data.returnedMicro, margin + after.realizedPnlMicro, () => `${after.tradeId}: returned = margin + PnL`);
          ensure(e.data.returnedMicro >= 0, () => `${after.tradeId}: returns ${e.data.returnedMicro}`);
        }
      }
    }
  }

  // ---- the transfer steps, as commands/transfers/steps.ts performs them ----

  private poolOf(plan: TransferPlan, side: 'from' | 'to'): PoolState {
    const e = plan[side];
    if (e.kind !== 'pool') throw refuse('VALIDATION_FAILED', `transfer ${plan.transferId}: the ${side} endpoint is not a pool`);
    same(poolId(e.userId, e.agentId, e.walletContext), this.poolId, () => `transfer ${plan.transferId} names another pool`);
    return this.w.pool(this.poolId);
  }

  perform(step: TransferStep): TransferOutcome {
    switch (step.type) {
      case 'LockMargin': {
        const { transfer } = step.data;
        const { tradeId } = tradeEndpoint(transfer, 'to');
        switch (this.poolOf(transfer, 'from').trades.get(tradeId)) {
          case 'open':
          case 'closed':
            return { type: 'Debited', amountMicro: transfer.amountMicro };
          case 'refused':
            return { type: 'DebitRefused', error: refuse('TRADE_SKIPPED', `the pool refused trade ${tradeId}`) };
          default:
            throw refuse('TRANSFER_NOT_FOUND', `the pool has not decided trade ${tradeId}`);
        }
      }
      case 'OpenTradeEntry': {
        const { transfer } = step.data;
        const { tradeId, poolId: pool, request } = tradeEndpoint(transfer, 'to');
        if (!request) throw refuse('VALIDATION_FAILED', `transfer ${transfer.transferId}: the trade has no request`);
        const rejected = (reason: string, message: string): TransferOutcome => {
          const { state } = this.executeTrade(tradeId, { type: 'RejectTrade', data: { tradeId, reason, message } });
          return state.status === 'rejected' ? { type: 'CreditRejected', reason: state.reason } : { type: 'Credited' };
        };
        const markPriceMicro = this.prices.get(request.token) ?? null;
        if (markPriceMicro === null) return rejected('NO_MARK_PRICE', `the venue has no price for ${request.token}`);
        try {
          const { state } = this.executeTrade(tradeId, {
            type: 'RequestTrade',
            data: { ...requestOfStored(request), tradeId, poolId: pool, notionalMicro: transfer.amountMicro * request.leverage, markPrice: priceFromMicro(markPriceMicro) },
          });
          return state.status === 'rejected' ? { type: 'CreditRejected', reason: state.reason } : { type: 'Credited' };
        } catch (err) {
          if (err instanceof DomainError) return rejected(err.reason, err.message);
          throw err;
        }
      }
      case 'ReleaseMargin': {
        const { transfer } = step.data;
        const { tradeId } = tradeEndpoint(transfer, 'to');
        this.poolOf(transfer, 'from');
        this.executePool({ type: 'CloseTrade', data: { tradeId, realizedPnlMicro: 0, released: true, transferId: transfer.transferId } });
        return { type: 'Refunded' };
      }
      case 'DebitTrade': {
        const { transfer } = step.data;
        const { tradeId } = tradeEndpoint(transfer, 'from');
        const state = this.trade(tradeId);
        if (state.status !== 'closed' && state.status !== 'cancelled' && state.status !== 'expired') {
          throw refuse('TRANSFER_NOT_FOUND', `trade ${tradeId} has not ended: it pays nothing back yet`);
        }
        return { type: 'Debited', amountMicro: marginFor(state.notionalMicro, state.leverage) + state.realizedPnlMicro };
      }
      case 'ReturnMargin': {
        const { transfer } = step.data;
        const { tradeId } = tradeEndpoint(transfer, 'from');
        const state = this.poolOf(transfer, 'to');
        const open = state.followed ? state.openTrades[tradeId] : undefined;
        if (!open) return { type: 'Credited' };
        this.executePool({ type: 'CloseTrade', data: { tradeId, realizedPnlMicro: transfer.amountMicro - open.marginMicro, transferId: transfer.transferId } });
        return { type: 'Credited' };
      }
      default:
        throw new Error(`${step.type}: not a step of a trade's transfer`);
    }
  }

  /**
   * Runs a transfer as commands/transfers/run.ts does, checking every invariant after every step;
   * under the action's faults a step is delivered twice (it must append nothing and report the same
   * fact), or the process stops after a step (Crash: that step appended, its outcome lost).
   */
  run(start: TransferState): TransferState {
    const id = start.plan.transferId;
    const crash = this.faults.crash;
    const crashAfter = crash !== null && crash.index === this.runs ? crash.after : null;
    this.runs++;
    let state = start;
    let steps = 0;
    for (let step = decide(state); step; step = decide(state)) {
      const outcome = this.perform(step);
      this.check(`${step.type} ${id}`);
      if (this.faults.twice) {
        const before = this.appended;
        const again = this.perform(step);
        this.seen.stepTwice++;
        same(this.appended, before, () => `${step.type} ${id} delivered twice appended again`);
        assert.deepEqual(outcomeKey(again), outcomeKey(outcome), `${step.type} ${id} delivered twice reported another fact`);
        this.check(`${step.type} ${id} again`);
      }
      if (crashAfter === ++steps) {
        this.transfers.set(id, 'crashed');
        this.seen.crashed++;
        if (start.plan.to.kind === 'trade') this.seen.crashedOpen++;
        else this.seen.crashedReturn++;
        throw new Crash(`${id} after ${steps} steps`);
      }
      state = evolve(state, outcome);
    }
    this.transfers.set(id, state);
    return state;
  }

  /** Resumes a transfer from its recorded plan (the recovery worker); one this world saw finished must change nothing. */
  resume(plan: TransferPlan): TransferState {
    const last = this.transfers.get(plan.transferId);
    const before = this.appended;
    const end = this.run(resumed(plan));
    if (last === 'crashed' || last === undefined) this.seen.resumedByWorker++;
    else if (isFinished(last)) {
      this.seen.finishedResumedAgain++;
      same(this.appended, before, () => `${plan.transferId}: resuming a finished transfer appended`);
      same(end.status, last.status, () => `${plan.transferId}: resuming a finished transfer ended otherwise`);
    }
    ensure(isFinished(end), () => `${plan.transferId}: resumed, it ended ${end.status}`);
    return end;
  }

  // ---- the commands, as the command layer runs them ----

  /** commands/trades/manage.ts manageTrade: the trade decides; an end runs its return transfer; an open trade's mark goes to the pool. */
  manage(tradeId: string, body: CommandBody<TradeCommand>): TradeState {
    const { state, events } = this.executeTrade(tradeId, body);
    for (const e of events) if (e.type === 'TradeSettled') this.run(planned(tradeReturnPlan(e.data)));
    if (state.status === 'none' || state.status === 'rejected') throw refuse('TRADE_NOT_FOUND', `no trade ${tradeId}`);
    const marked = [...events].reverse().find((e) => e.type === 'TradeMarked');
    if (marked?.type === 'TradeMarked' && state.status === 'open') {
      const { userId, agentId, walletContext } = poolEndpointOf(state.poolId);
      same(poolId(userId, agentId, walletContext), this.poolId, () => `${tradeId}: another pool`);
      if (this.executePool({ type: 'MarkTrade', data: { tradeId, unrealizedPnlMicro: marked.data.unrealizedPnlMicro + state.realizedPnlMicro } }).events.length > 0) this.seen.poolMarked++;
    }
    return state;
  }

  /**
   * A signal's opens in the pool (execute.ts openTrades): each intent's order (tradeOrderOf), the
   * pool's decision on the group, then the group's transfers. Returns the group.
   */
  signal(intents: OpenIntent[]): Group {
    const n = ++this.signals;
    const pool = this.pool();
    const from = poolEndpointOf(this.poolId);
    const trades = intents.map((intent, index) => {
      const order = tradeOrderOf(intent, { defaults: this.defaults, terms: pool.terms, feeBps: FEE_BPS, now: new Date(this.now), markPrice: this.markOf(intent.token) });
      assert.ok(order.ok, 'a perp venue takes both sides');
      const tradeId = `s${n}-${index}`;
      return {
        tradeId,
        size: order.size,
        token: order.request.token,
        side: order.request.side,
        signalId: `signal-${n}`,
        transfer: { transferId: tradeId, amountMicro: 0, from, to: { kind: 'trade' as const, tradeId, poolId: this.poolId, request: order.request } },
      };
    });
    const data: OpenTrade['data'] = { limits: tradeLimitsOf(this.defaults, pool.terms), trades };
    const group: Group = { tradeIds: trades.map((t) => t.tradeId), data, interrupted: true };
    this.groups.push(group);
    const { events } = this.executePool({ type: 'OpenTrade', data });
    this.checkGroupDecision(pool, data, events);
    this.check(`OpenTrade s${n}`);
    this.execute(group, events);
    return group;
  }

  /** The signal job again (a worker died mid-way): the group is a repeat, decided by its record. */
  rerun(group: Group): void {
    const { events } = this.executePool({ type: 'OpenTrade', data: group.data });
    same(events.length, 0, () => 'a group decided again appends nothing');
    this.seen.resumedByJob++;
    this.execute(group, events);
  }

  /** After the pool's decision: every trade's transfer, then both or neither. */
  private execute(group: Group, events: PoolEvent[]): void {
    group.interrupted = true;
    const ids = new Set(group.tradeIds);
    // The decision just made, or the one the pool recorded (execute.ts decisionOf / recordedDecision).
    const decided = events.length > 0 ? events : this.poolEvents();
    const plans: TransferPlan[] = [];
    for (const e of decided) {
      if (e.type === 'TradeRefused' && ids.has(e.data.tradeId)) {
        group.interrupted = false;
        return;
      }
      if (e.type === 'TradeOpened' && ids.has(e.data.tradeId) && e.data.transfer) plans.push(e.data.transfer);
    }
    const finished = plans.map((plan) => this.run(planned(plan)));
    const rejected = finished.find((f) => f.status !== 'completed');
    if (rejected) {
      for (const f of finished) {
        if (f.status !== 'completed' || f.plan.to.kind !== 'trade') continue;
        const { tradeId, request } = f.plan.to;
        const priceMicro = this.prices.get(request!.token);
        if (priceMicro === undefined) throw refuse('VALIDATION_FAILED', `no mark price for ${request!.token}`);
        const before = this.trade(tradeId);
        this.manage(tradeId, { type: 'ClosePosition', data: { closePercent: 100, price: priceFromMicro(priceMicro), reason: 'SIGNAL' } });
        if (live(before)) this.seen.undoneBothOrNeither++;
      }
    }
    group.interrupted = false;
  }

  /** The price moves: every live trade of the token is ticked (the price watcher, one command per trade). */
  /** The mark of a token as a price (the world keeps its prices in micro-USD). */
  markOf(token: string): bigint | null {
    const micro = this.prices.get(token);
    return micro === undefined ? null : priceFromMicro(micro);
  }

  tick(token: string, priceMicro: number, faults: Faults = noFaults): void {
    this.prices.set(token, priceMicro);
    this.faults = faults;
    this.runs = 0;
    try {
      for (const tradeId of this.liveTrades(token)) {
        try {
          this.manage(tradeId, { type: 'MarkPrice', data: { price: priceFromMicro(priceMicro) } });
        } catch (err) {
          if (!(err instanceof Crash)) throw err;
        }
      }
    } finally {
      this.faults = noFaults;
    }
  }

  /** A follow-up or a user's command on one trade; a refusal is the pool's result (skipped or failed), never a change. */
  command(tradeId: string, body: CommandBody<TradeCommand>, faults: Faults = noFaults): 'done' | 'refused' | 'crashed' {
    const before = this.appended;
    let result: 'done' | 'refused' | 'crashed' = 'done';
    this.withFaults(faults, () => {
      try {
        this.manage(tradeId, body);
      } catch (err) {
        if (err instanceof Crash) {
          result = 'crashed';
          throw err;
        }
        if (!(err instanceof DomainError)) throw err;
        same(this.appended, before, () => `${tradeId}: a refused ${body.type} appended`);
        this.seen.followUpRefused++;
        result = 'refused';
      }
    });
    return result;
  }

  /** The recovery worker: every plan recorded by a debit (the pool's TradeOpened, a trade's TradeSettled) is resumed. */
  recoverTrades(): void {
    const plans: TransferPlan[] = [];
    for (const e of this.poolEvents()) if (e.type === 'TradeOpened' && e.data.transfer) plans.push(e.data.transfer);
    for (const events of this.tradeEvents.values()) for (const e of events) if (e.type === 'TradeSettled') plans.push(tradeReturnPlan(e.data));
    for (const plan of plans) this.resume(plan);
  }

  /** The signal jobs cut short run again. */
  rerunInterrupted(): void {
    for (const group of this.groups) if (group.interrupted) this.rerun(group);
  }

  /** Every plan a debit recorded, by transfer id. */
  recordedPlans(): Map<string, TransferPlan> {
    const plans = new Map<string, TransferPlan>();
    for (const e of this.poolEvents()) if (e.type === 'TradeOpened' && e.data.transfer) plans.set(e.data.transfer.transferId, e.data.transfer);
    for (const events of this.tradeEvents.values()) for (const e of events) if (e.type === 'TradeSettled') plans.set(e.data.transferId, tradeReturnPlan(e.data));
    return plans;
  }

  /** Everything finished: the wallet's and pool's transfers recovered, the venue's legs confirmed, the jobs run again, the trades' transfers resumed. */
  drain(): void {
    for (let round = 0; round < 10; round++) {
      this.w.recover();
      for (const [transferId, leg] of Object.entries(this.w.pool(this.poolId).pending)) this.w.settle(this.poolId, transferId, 'confirmed', leg.amountMicro);
      this.rerunInterrupted();
      this.recoverTrades();
      const unfinished = [...this.recordedPlans().keys()].filter((id) => {
        const s = this.transfers.get(id);
        return s === undefined || s === 'crashed' || !isFinished(s);
      });
      if (unfinished.length === 0 && Object.keys(this.w.pool(this.poolId).pending).length === 0 && this.groups.every((g) => !g.interrupted)) return;
    }
    assert.fail('the transfers never finished');
  }

  // ---- the invariants ----

  /**
   * Property 4, on the state the group was decided on (limits: the agent's, at most 4 open trades
   * and a 1 USD margin; free capital = withdrawableUsd): a margin is fixed or floor(free × percent
   * / 100); the group opens whole with exactly those margins when they fit (Σ ≤ free), else every
   * trade of it is refused (TradeRefused) for the first limit it breaks: MAX_OPEN_POSITIONS,
   * BELOW_MIN_TRADE, INSUFFICIENT_CAPITAL. Nothing opens beyond the free capital.
   */
  private checkGroupDecision(before: FollowedPool, data: OpenTrade['data'], events: PoolEvent[]): void {
    const free = this.w.figures(before).withdrawableUsd;
    const margins = data.trades.map((t) => ('marginMicro' in t.size ? t.size.marginMicro : Number((BigInt(free) * BigInt(Math.round(t.size.percent * 100))) / 10_000n)));
    const total = margins.reduce((s, m) => s + m, 0);
    const { limits } = data;
    const open = Object.keys(before.openTrades).length;
    const reason =
      limits.maxOpenPositions !== null && open + margins.length > limits.maxOpenPositions
        ? 'MAX_OPEN_POSITIONS'
        : margins.some((m) => m === 0 || m < limits.minTradeMicro)
          ? 'BELOW_MIN_TRADE'
          : total > free
            ? 'INSUFFICIENT_CAPITAL'
            : null;
    const what = () => `a group of ${margins.join(' + ')} with ${free} free and ${open} open`;
    same(events.length, data.trades.length, () => `${what()}: one event per trade`);
    if (reason !== null) {
      events.forEach((e, i) => {
        ensure(e.type === 'TradeRefused' && e.data.tradeId === data.trades[i]!.tradeId, () => `${what()}: refused whole, got ${e.type}`);
        same(e.type === 'TradeRefused' ? e.data.reason : null, reason, () => `${what()}: the reason`);
      });
      if (reason === 'INSUFFICIENT_CAPITAL') this.seen.refusedCapital++;
      else this.seen.refusedOtherLimit++;
      return;
    }
    ensure(total <= free, () => `${what()}: opened beyond the free capital`);
    events.forEach((e, i) => {
      ensure(e.type === 'TradeOpened' && e.data.tradeId === data.trades[i]!.tradeId, () => `${what()}: opened whole, got ${e.type}`);
      same(e.type === 'TradeOpened' ? e.data.marginMicro : null, margins[i], () => `${what()}: trade ${i}'s margin`);
      same(e.type === 'TradeOpened' ? e.data.transfer?.amountMicro : null, margins[i], () => `${what()}: trade ${i}'s transfer pays its margin`);
    });
    this.seen.groupOpened++;
    if (margins.length > 1) this.seen.groupOfTwoOpened++;
    if (data.trades.some((t) => 'percent' in t.size)) this.seen.openedByPercent++;
  }

  /**
   * After every step:
   * - the pool world's checks (../pool/world.ts World.check): money conserved between the wallet,
   *   the pool's currentBalanceUsd (confirmedIn − confirmedOut + realized − feesCharged), what is
   *   in flight and the fees settled, = START + deposits + Σ PnL the pool realized; nothing
   *   negative; currentBalanceUsd ≥ locked + pendingOut (free capital never negative); locked = Σ
   *   margins of the pool's openTrades;
   * - property 1: every live (pending/open) trade is open in the pool with its margin
   *   marginFor(notional, leverage); a trade open in the pool that is not live is one whose transfer
   *   is unfinished: its open (not requested yet, or rejected and not released) or its return;
   * - property 2: the pool's realized = Σ realized PnL of the trades it closed (a released trade
   *   realizes 0), each TradeClosed once per trade, its PnL the trade's (its return's amount − margin);
   * - property 3 with the trades: capital confirmed in + Σ PnL the trades realized = the pool's
   *   currentBalanceUsd + confirmedOut + fees charged + the PnL of trades not paid back yet;
   * - property 5: fees charged ≤ successFeePercent% × max(0, the highest realized PnL so far);
   * - the process state each trade transfer was left in matches the records.
   */
  check(context: string): void {
    this.w.check(context);
    const pool = this.pool();
    const { ledger } = pool;
    // 1. margins
    for (const [id, s] of this.trades) {
      if (!live(s)) continue;
      same(pool.openTrades[id]?.marginMicro, marginFor(s.notionalMicro, s.leverage), () => `${context}: live trade ${id}'s margin in the pool`);
    }
    let locked = 0;
    for (const [id, open] of Object.entries(pool.openTrades)) {
      locked += open.marginMicro;
      const s = this.trade(id);
      if (live(s)) continue;
      const transfer = this.transfers.get(ended(s) ? `${id}.return` : id);
      ensure(transfer === undefined || transfer === 'crashed' || !isFinished(transfer), () => `${context}: trade ${id} is ${s.status}, open in the pool, and its transfer finished ${JSON.stringify(transfer)}`);
    }
    same(ledger.locked, locked, () => `${context}: locked is the open trades' margins`);
    // 2. realized
    const closes = new Map<string, number>();
    let realized = 0;
    for (const e of this.poolEvents()) {
      if (e.type !== 'TradeClosed') continue;
      const id = e.data.tradeId;
      ensure(!closes.has(id), () => `${context}: trade ${id} closed twice in the pool`);
      closes.set(id, e.data.realizedPnlMicro);
      const s = this.trade(id);
      if (e.data.released) {
        same(s.status, 'rejected', () => `${context}: trade ${id} released`);
        same(e.data.realizedPnlMicro, 0, () => `${context}: released ${id}`);
      } else {
        ensure(ended(s), () => `${context}: trade ${id} closed in the pool while ${s.status}`);
        same(e.data.realizedPnlMicro, s.realizedPnlMicro, () => `${context}: trade ${id}'s PnL in the pool`);
        same(e.data.transferId, `${id}.return`, () => `${context}: trade ${id} closed by its return`);
      }
      realized += e.data.realizedPnlMicro;
    }
    same(ledger.realized, realized, () => `${context}: the pool's realized is its closed trades'`);
    // 3. money, trades included
    let tradesRealized = 0;
    let notPaidBack = 0;
    for (const [id, s] of this.trades) {
      if (!requested(s)) continue;
      tradesRealized += s.realizedPnlMicro;
      if (!closes.has(id)) notPaidBack += s.realizedPnlMicro;
    }
    same(
      ledger.confirmedIn + tradesRealized,
      currentBalanceUsd(ledger) + ledger.confirmedOut + ledger.feesCharged + notPaidBack,
      () => `${context}: capital in ${ledger.confirmedIn} + trades' PnL ${tradesRealized} = balance + out ${ledger.confirmedOut} + fees ${ledger.feesCharged} + PnL not paid back ${notPaidBack}`,
    );
    ensure(currentBalanceUsd(ledger) - ledger.locked - ledger.pendingOut >= 0, () => `${context}: negative free capital`);
    // 5. fees
    this.peakRealized = Math.max(this.peakRealized, ledger.realized);
    const [num, den] = percentFraction(pool.terms.successFeePercent);
    ensure(BigInt(ledger.feesCharged) * den <= BigInt(Math.max(0, this.peakRealized)) * num, () => `${context}: fees ${ledger.feesCharged} above ${pool.terms.successFeePercent}% of the peak realized ${this.peakRealized}`);
    // the process states
    for (const [id, s] of this.transfers) {
      if (s === 'crashed') continue;
      const why = () => `${context}: transfer ${id} is ${s.status}`;
      if (s.plan.to.kind === 'trade') {
        const trade = this.trade(s.plan.to.tradeId);
        const fate = pool.trades.get(s.plan.to.tradeId);
        if (s.status === 'completed') ensure(requested(trade), why);
        else if (s.status === 'compensated') ensure(trade.status === 'rejected' && fate === 'closed', why);
        else if (s.status === 'failed') ensure(fate === 'refused', why);
        else assert.fail(why());
      } else {
        ensure(s.status === 'completed' && closes.has(tradeEndpoint(s.plan, 'from').tradeId), why);
      }
    }
  }

  /**
   * Once every transfer finished and every job ran:
   * - property 6: every recorded plan's transfer is final; each trade that ended or was rejected
   *   closed in the pool exactly once;
   * - property 1 exactly: the pool's open trades are the live trades, locked = Σ marginFor(notional,
   *   leverage) over them;
   * - property 2 exactly: realized = Σ realized PnL over every trade that ended;
   * - both or neither: in a group where a trade was rejected no trade is live; a refused group
   *   never requested a trade.
   */
  checkDrained(): void {
    this.check('drained');
    const pool = this.pool();
    for (const [id] of this.recordedPlans()) {
      const s = this.transfers.get(id);
      ensure(s !== undefined && s !== 'crashed' && isFinished(s), () => `transfer ${id} unfinished: ${JSON.stringify(s)}`);
    }
    let locked = 0;
    let realized = 0;
    for (const [id, s] of this.trades) {
      if (live(s)) locked += marginFor(s.notionalMicro, s.leverage);
      if (ended(s)) realized += s.realizedPnlMicro;
      same(pool.trades.get(id), live(s) ? 'open' : 'closed', () => `trade ${id} (${s.status}) in the pool`);
    }
    same(pool.ledger.locked, locked, () => 'locked = Σ margins of the live trades');
    same(Object.keys(pool.openTrades).length, this.liveTrades().length, () => 'the pool\'s open trades are the live ones');
    same(pool.ledger.realized, realized, () => 'realized = Σ PnL of the trades that ended');
    for (const group of this.groups) {
      const states = group.tradeIds.map((id) => this.trade(id));
      const fates = group.tradeIds.map((id) => pool.trades.get(id));
      if (fates.every((f) => f === 'refused')) ensure(states.every((s) => s.status === 'none'), () => `refused group ${group.tradeIds} requested a trade`);
      else ensure(fates.every((f) => f !== 'refused'), () => `group ${group.tradeIds} partly refused`);
      if (states.some((s) => s.status === 'rejected')) ensure(!states.some(live), () => `group ${group.tradeIds}: one rejected, another live`);
    }
  }
}
