// A world of one followed pool and its agent trades, for the trades-as-transfers property test
// (transfers.test.ts), on the real code over an in-memory event log: the pool lives in the pool
// ledger's world (../pool/world.ts: the wallet, the pool, its own checks of every pool decision and
// of money conserved between wallet, pool and fees); this world adds the agent, its signals, a
// price per token and a clock, and sends the real commands:
// - a signal is the real ExecuteSignal command (commands/signals/execute.ts: its opens one pool
//   OpenTrade group, one transfer per trade through the real runner and steps, the trades that opened
//   closed at once when another of the group could not; its follow-ups the trade they name);
// - a price move is the real MarkTradePrice command per live trade of the token, a user's close the
//   real CloseUserTrade (commands/trades/manage.ts: an end runs the return transfer);
// - the recovery is the real ResumeTransfer from every recorded plan (the pool's TradeOpened, the
//   trade's TradeSettled), and a signal job cut short runs ExecuteSignal again;
// - faults: a command's process dies at its n-th append (before it, or after it with its answer
//   lost), or the command is sent by two processes at once.
// Invariants are checked after every action and every runner step (TradeWorld.check), each group
// decision against the pool's state before it, and once everything is finished (checkDrained).
import assert from 'node:assert/strict';
import type { Dispatch } from '../../../commands/dispatch.ts';
import { tradeIdOf } from '../../../commands/signals/execute.ts';
import type { SignalExecutionDefaults } from '../../../domain/agent/record.ts';
import { agentStream } from '../../../domain/agent/state.ts';
import type { AgentTerms, PoolEvent } from '../../../domain/pool/events.ts';
import { currentBalanceUsd } from '../../../domain/pool/ledger.ts';
import { tradeLimitsOf } from '../../../domain/pool/limits.ts';
import { poolId, poolStream, type FollowedPool, type PoolState } from '../../../domain/pool/state.ts';
import type { OpenTrade } from '../../../domain/pool/trades.ts';
import { DomainError } from '../../../domain/shared/errors.ts';
import { percentFraction } from '../../../domain/shared/money.ts';
import { priceFromMicro } from '../../../domain/shared/price.ts';
import { signalDecider, signalInstanceId } from '../../../domain/signal/decide.ts';
import { tradeOrderOf } from '../../../domain/signal/execution.ts';
import type { Intent, OpenIntent } from '../../../domain/signal/intent.ts';
import { tradeDecider, type Trade, type TradeEvent, type TradeState } from '../../../domain/trade/decide.ts';
import { marginFor } from '../../../domain/trade/maths.ts';
import { tradeReturnPlan, type TransferPlan } from '../../../domain/transfer/plan.ts';
import { planned } from '../../../domain/transfer/process.ts';
import type { WalletContext } from '../../../domain/wallet/events.ts';
import type { RecordedEvent } from '../../../infra/eventstore/port.ts';
import { Crash, MemoryService } from '../../support/memory-service.ts';
import { settings, terms as spotTerms } from '../pool/fixtures.ts';
import { reached as poolPaths, START, USER, World } from '../pool/world.ts';

export const AGENT = 'agent-signals';
/** TRADE_FEE_BPS, the simulated venue's fee on entry and every exit (the configuration's default) */
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
  resumedByWorker: 0,
  resumedByJob: 0,
  finishedResumedAgain: 0,
  sentTwice: 0,
  withdrawn: 0,
  feesSettled: 0,
};
type Paths = typeof paths;

/** Faults of one action: its process dies at its `at`-th append (before it, or after it with the answer lost); `twice`: a second process sends it too. */
export interface Faults {
  crash: { at: number; applied: boolean } | null;
  twice: boolean;
}
const noFaults: Faults = { crash: null, twice: false };

/** One signal's opens in the pool: its key, the trades it asked for, and what the pool was asked. */
export interface Group {
  signalKey: string;
  tradeIds: string[];
  data: OpenTrade['data'];
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

export class TradeWorld {
  readonly service = new MemoryService({ virtualStartMicro: START, now: new Date(T0) });
  /** the wallet and the pool, with the pool world's own checks */
  readonly w: World;
  readonly poolId: string;
  readonly prices = new Map<string, number>();
  /** every trade a signal asked for, in order */
  readonly tradeIds: string[] = [];
  readonly groups: Group[] = [];
  /** the highest realized PnL the pool ever had: what success fees may be charged on */
  peakRealized = 0;
  private signals = 0;
  /** the pool holds its capital: the invariants hold from then on, at every append */
  private funded = false;
  /** the group being decided: checked against the pool's state when its decision is appended */
  private deciding: Group | null = null;

  constructor(
    readonly walletContext: WalletContext,
    readonly capitalMicro: number,
    readonly defaults: SignalExecutionDefaults,
    readonly seen: Paths = paths,
  ) {
    this.service.onAppend = (stream, before, appended) => this.watch(stream, before, appended);
    this.w = new World(Object.fromEntries(Object.keys(poolPaths).map((k) => [k, 0])) as typeof poolPaths, this.service);
    this.w.checkEachAppend = false; // this world's own check runs the pool world's after every append
    this.poolId = poolId(USER, AGENT, walletContext);
    // Every invariant after every append to the pool or a trade, inside the commands too (funded, not stopped).
    const folded = this.service.onAppend;
    this.service.onAppend = (stream, before, appended) => {
      folded(stream, before, appended);
      if (!this.funded || !(stream.startsWith('pool-') || stream.startsWith('trade-')) || !this.w.pool(this.poolId).followed) return;
      try {
        this.check(`${appended.map((e) => e.type).join(', ')} on ${stream}`);
      } catch (err) {
        this.w.failure ??= err;
        throw err;
      }
    };
  }

  get now(): number {
    return this.service.now.getTime();
  }

  set now(ms: number) {
    this.service.now = new Date(ms);
  }

  /** The agent, the market, and the pool's capital: a follow's transfer from the wallet (real: a deposit first, then the venue confirms the add). */
  async setup(): Promise<void> {
    this.service.given(agentStream(AGENT), [
      {
        type: 'AgentListed',
        data: {
          agentId: AGENT,
          developerId: 'dev',
          name: 'Perp Signals',
          tags: [],
          monthlyPriceMicroUsd: 0,
          successFeePercent: 20,
          connectedChannels: [],
          membershipGated: false,
          venue: 'PERP_VENUE',
          maxLeverage: 10,
          minAllocationMicroUsd: 1_000_000,
          minTradeMicroUsd: 1_000_000,
          minPerTradePercent: 0,
          recommendedPerTradePercent: 10,
          maxConcurrentPositions: 4,
          maxEntriesPerTrade: 3,
          signingSecretCiphertext: 'v1.x.y.z',
          signalExecutionDefaults: this.defaults,
          listedAt: new Date(T0).toISOString(),
        },
      },
    ]);
    for (const t of TOKENS) if (t.priceMicro !== null) await this.setPrice(t.symbol, t.priceMicro);
    if (this.walletContext === 'real') assert.ok(await this.w.deposit('deposit-1', this.capitalMicro));
    else assert.ok(this.capitalMicro <= START);
    const add: TransferPlan = {
      transferId: `${this.poolId}#add-1`,
      amountMicro: this.capitalMicro,
      from: { kind: 'wallet', userId: USER, walletContext: this.walletContext },
      to: {
        kind: 'pool',
        userId: USER,
        agentId: AGENT,
        walletContext: this.walletContext,
        follow: { settings: { ...settings, tradeMode: 'FULL_TRADING' }, terms: perpTerms },
      },
    };
    const { end } = await this.w.run(planned(add));
    if (this.walletContext === 'real') {
      same(end?.status, 'pending', () => 'a real add waits for the venue');
      await this.w.settle(this.poolId, add.transferId, 'confirmed', this.capitalMicro);
    } else {
      same(end?.status, 'completed', () => 'a virtual add completes');
    }
    same(this.pool().ledger.confirmedIn, this.capitalMicro, () => 'the pool holds its capital');
    this.check('funded');
    this.funded = true;
  }

  async setPrice(token: string, priceMicro: number): Promise<void> {
    this.prices.set(token, priceMicro);
    await this.service.send('SetMarketPrices', { prices: { [token]: priceFromMicro(priceMicro) } });
  }

  pool(): FollowedPool {
    const p: PoolState = this.w.pool(this.poolId);
    assert.ok(p.followed, 'the pool stays followed');
    return p;
  }

  trade(tradeId: string): TradeState {
    return this.service.state(tradeDecider, tradeId);
  }

  tradeEvents(tradeId: string): TradeEvent[] {
    return this.service.events<TradeEvent>(tradeDecider, tradeId);
  }

  poolEvents(): PoolEvent[] {
    return this.w.poolEvents(this.poolId);
  }

  /** The id of the `index`-th trade of the `n`-th signal (commands/signals/execute.ts `tradeIdOf`). */
  tradeId(n: number, index: number): string {
    return tradeIdOf(this.poolId, `s${n}`, index);
  }

  /** Whether an open trade of the pool is marked at a loss larger than its margin, which it can never realize. */
  markedPastItsMargin(): boolean {
    return Object.values(this.pool().openTrades).some((trade) => trade.unrealizedMicro < -trade.marginMicro);
  }

  /** The trades of the pool: live (pending/open) ones, by token when given. */
  liveTrades(token?: string): string[] {
    return this.tradeIds.filter((id) => {
      const s = this.trade(id);
      return live(s) && (token === undefined || s.token === token);
    });
  }

  // ---- what the streams record ----

  /** Every append: its paths counted, a trade's settlement and a group's decision checked against what they were decided on. */
  private watch(stream: string, _before: RecordedEvent[], appended: RecordedEvent[]): void {
    try {
      if (stream.startsWith('trade-')) {
        const before = (_before as unknown as TradeEvent[]).reduce(tradeDecider.evolve, tradeDecider.initialState());
        this.count(before, appended as unknown as TradeEvent[]);
      }
      if (stream !== poolStream(this.poolId)) return;
      if (appended.some((e) => e.type === 'TradeMarked')) this.seen.poolMarked++;
      const group = this.deciding;
      if (!group) return;
      const decided = (appended as unknown as PoolEvent[]).filter(
        (e) => (e.type === 'TradeOpened' || e.type === 'TradeRefused') && group.tradeIds.includes(e.data.tradeId),
      );
      if (decided.length > 0) this.checkGroupDecision(this.pool(), group.data, decided);
    } catch (err) {
      this.w.failure ??= err;
      throw err;
    }
  }

  /** The paths a trade's events reach; a settlement pays back its margin and the PnL it realized, never less than nothing. */
  private count(before: TradeState, events: TradeEvent[]): void {
    const seen = this.seen;
    const after = events.reduce(tradeDecider.evolve, before);
    for (const e of events) {
      if (e.type === 'TradeFilled') before.status === 'none' ? seen.filledAtOnce++ : seen.filledOnTick++;
      if (e.type === 'EntryPending') seen.entryPending++;
      if (e.type === 'EntryExpired') seen.expired++;
      if (e.type === 'EntryCancelled') seen.cancelled++;
      if (e.type === 'TargetHit') seen.targetHit++;
      if (e.type === 'TradeReduced') seen.reduced++;
      if (e.type === 'TradeClosed') {
        const r = e.data.reason;
        if (r === 'STOP_LOSS') seen.closedStop++;
        if (r === 'TAKE_PROFIT') seen.closedTarget++;
        if (r === 'TRAILING_STOP') seen.closedTrailing++;
        if (r === 'BREAKEVEN_STOP') seen.closedBreakeven++;
        if (r === 'SIGNAL') seen.closedBySignal++;
        if (r === 'USER') seen.closedByUser++;
        if (requested(after)) same(e.data.totalRealizedPnlMicro, after.realizedPnlMicro, () => `${after.tradeId}: the close carries the trade's realized PnL`);
      }
      if (e.type === 'TradeSettled' && requested(after)) {
        if (e.data.realizedPnlMicro > 0) seen.closedWithProfit++;
        if (e.data.realizedPnlMicro < 0) seen.closedWithLoss++;
        if (e.data.returnedMicro === 0) seen.lostWholeMargin++;
        const margin = marginFor(after.notionalMicro, after.leverage);
        same(e.data.marginMicro, margin, () => `${after.tradeId}: the settlement's margin`);
        same(e.data.realizedPnlMicro, after.realizedPnlMicro, () => `${after.tradeId}: the settlement's PnL`);
        same(e.data.returnedMicro, margin + after.realizedPnlMicro, () => `${after.tradeId}: returned = margin + PnL`);
        ensure(e.data.returnedMicro >= 0, () => `${after.tradeId}: returns ${e.data.returnedMicro}`);
      }
      if (e.type === 'TradeRejected') {
        if (e.data.reason === 'INVALID_LEVELS') seen.rejectedInvalidLevels++;
        if (e.data.reason === 'NO_MARK_PRICE') seen.rejectedNoMark++;
        if (e.data.message.includes('expiresAt')) seen.rejectedExpiredRequest++;
      }
    }
  }

  // ---- the commands ----

  /** Sends a command under `faults`; 'crashed' when its process died, 'refused' on a refusal of the catalogue. */
  private async send(send: (dispatch: Dispatch) => Promise<unknown>, faults: Faults, dispatch?: Dispatch): Promise<'done' | 'refused' | 'crashed'> {
    const attempt = async (dispatch: Dispatch): Promise<'done' | 'refused' | 'crashed'> => {
      try {
        await send(dispatch);
        return 'done';
      } catch (err) {
        if (err instanceof Crash) return 'crashed';
        if (err instanceof DomainError) return 'refused';
        throw err;
      }
    };
    const first = dispatch ?? (faults.crash ? this.service.dying(faults.crash.at, faults.crash.applied) : this.service.dispatch);
    const [result, again] = await Promise.all([attempt(first), faults.twice ? attempt(this.service.process()) : null]);
    if (this.w.failure) throw this.w.failure;
    // Sent twice at once, the second may find the trade ended by the first and be refused for it
    // (a business refusal, never another error); what both did is checked on the records.
    if (again !== null) this.seen.sentTwice++;
    if (result === 'crashed') this.seen.crashed++;
    return result;
  }

  /** A signal of `intents` (ExecuteSignal): opens as one group, follow-ups naming the trade of `replyTo`'s signal. */
  async signal(intents: Intent[], faults: Faults = noFaults, replyTo?: string): Promise<Group> {
    const n = ++this.signals;
    const signalKey = `s${n}`;
    const pool = this.pool();
    const opens = intents.flatMap((intent, index) => (intent.action === 'open' ? [{ intent, index }] : []));
    const trades = opens.map(({ intent, index }) => {
      const order = tradeOrderOf(intent, {
        defaults: this.defaults,
        terms: pool.terms,
        feeBps: FEE_BPS,
        now: new Date(this.now),
        markPrice: this.markOf(intent.token),
      });
      assert.ok(order.ok, 'a perp venue takes both sides');
      return { tradeId: tradeIdOf(this.poolId, signalKey, index), size: order.size };
    });
    const group: Group = {
      signalKey,
      tradeIds: trades.map((x) => x.tradeId),
      data: { limits: tradeLimitsOf(this.defaults, pool.terms), trades: trades as OpenTrade['data']['trades'] },
    };
    if (opens.length > 0) {
      this.groups.push(group);
      this.tradeIds.push(...group.tradeIds);
    }
    const interpretation = { kind: 'signal' as const, ruleVersion: 'structured-1', intents };
    this.service.given(signalDecider.streamOf(signalInstanceId(AGENT, signalKey)), [
      {
        type: 'SignalReceived',
        data: {
          agentId: AGENT,
          signalId: `signal-${n}`,
          signalIdGiven: true,
          source: 'structured',
          body: {},
          interpretation,
          ...(replyTo ? { replyTo } : {}),
          receivedAt: new Date(this.now).toISOString(),
        },
      },
    ]);
    this.deciding = opens.length > 0 ? group : null;
    await this.send((dispatch) => this.service.send('ExecuteSignal', { agentId: AGENT, signalKey, poolIds: [this.poolId] }, dispatch), faults);
    this.deciding = null;
    this.check(`signal ${signalKey}`);
    return group;
  }

  /** Whether a signal's job ran to its recorded outcome. */
  executed(signalKey: string): boolean {
    return this.service.state(signalDecider, signalInstanceId(AGENT, signalKey)).status === 'executed';
  }

  /** What a signal's job recorded in the pool: executed, skipped, failed (null before it ran to its outcome). */
  outcome(signalKey: string): string | null {
    const state = this.service.state(signalDecider, signalInstanceId(AGENT, signalKey));
    return state.status === 'executed' ? (state.executed.results[0]?.status ?? null) : null;
  }

  /** The signal job again (a worker died mid-way): the group is a repeat, decided by its record. */
  async rerun(group: Group): Promise<void> {
    const size = this.poolEvents().length;
    const decided = group.tradeIds.some((id) => this.w.pool(this.poolId).trades.has(id));
    this.deciding = group;
    await this.service.send('ExecuteSignal', { agentId: AGENT, signalKey: group.signalKey, poolIds: [this.poolId] });
    this.deciding = null;
    if (this.w.failure) throw this.w.failure;
    if (decided)
      ensure(
        !this.poolEvents()
          .slice(size)
          .some((e) => e.type === 'TradeOpened' || e.type === 'TradeRefused'),
        () => 'a group decided again appends nothing',
      );
    this.seen.resumedByJob++;
    this.check(`rerun ${group.signalKey}`);
  }

  /** The signal jobs cut short run again. */
  async rerunInterrupted(): Promise<void> {
    for (const group of this.groups) if (!this.executed(group.signalKey)) await this.rerun(group);
  }

  /** The mark of a token as a price (the world keeps its prices in micro-USD). */
  markOf(token: string): bigint | null {
    const micro = this.prices.get(token);
    return micro === undefined ? null : priceFromMicro(micro);
  }

  /** The price moves: every live trade of the token is ticked (the price watcher, one MarkTradePrice per trade, on one process). */
  async tick(token: string, priceMicro: number, faults: Faults = noFaults): Promise<void> {
    await this.setPrice(token, priceMicro);
    const dispatch = faults.crash ? this.service.dying(faults.crash.at, faults.crash.applied) : this.service.dispatch;
    for (const tradeId of this.liveTrades(token)) {
      const result = await this.send((d) => this.service.send('MarkTradePrice', { tradeId, price: priceFromMicro(priceMicro) }, d), faults, dispatch);
      if (result === 'crashed') break;
    }
    this.check(`tick ${token}`);
  }

  /** The user closes one of their trades (CloseUserTrade, at the market's mark); a refusal changes nothing. */
  async userClose(tradeId: string, faults: Faults = noFaults): Promise<'done' | 'refused' | 'crashed'> {
    const size = this.service.log.size;
    const result = await this.send((dispatch) => this.service.send('CloseUserTrade', { tradeId, userId: USER }, dispatch), faults);
    if (result === 'refused') {
      same(this.service.log.size, size, () => `${tradeId}: a refused close appended`);
      this.seen.followUpRefused++;
    }
    this.check(`close ${tradeId}`);
    return result;
  }

  /** Every plan a debit recorded, with the stream that holds it: the pool's TradeOpened, a trade's TradeSettled. */
  recordedPlans(): Array<{ plan: TransferPlan; sourceStream: string }> {
    const plans: Array<{ plan: TransferPlan; sourceStream: string }> = [];
    for (const e of this.poolEvents())
      if (e.type === 'TradeOpened' && e.data.transfer) plans.push({ plan: e.data.transfer, sourceStream: poolStream(this.poolId) });
    for (const id of this.tradeIds) {
      for (const e of this.tradeEvents(id))
        if (e.type === 'TradeSettled') plans.push({ plan: tradeReturnPlan(e.data), sourceStream: tradeDecider.streamOf(id) });
    }
    return plans;
  }

  /** Whether the records show a trade transfer finished: an open requested the trade, released its rejection or was refused; a return closed the trade in its pool. */
  finished(plan: TransferPlan): boolean {
    const pool = this.w.pool(this.poolId);
    if (plan.to.kind === 'trade') {
      const s = this.trade(plan.to.tradeId);
      const fate = pool.trades.get(plan.to.tradeId);
      return requested(s) || fate === 'refused' || (s.status === 'rejected' && fate === 'closed');
    }
    return (
      plan.from.kind === 'trade' && this.poolEvents().some((e) => e.type === 'TradeClosed' && e.data.tradeId === (plan.from as { tradeId: string }).tradeId)
    );
  }

  /** The recovery worker (ResumeTransfer) on every trade plan; one that finished appends nothing. */
  async recoverTrades(): Promise<void> {
    for (const { plan, sourceStream } of this.recordedPlans()) {
      const wasFinished = this.finished(plan);
      const size = this.service.log.size;
      const { status } = await this.service.send('ResumeTransfer', { transferId: plan.transferId, sourceStream });
      if (this.w.failure) throw this.w.failure;
      ensure(['completed', 'compensated', 'failed'].includes(status), () => `${plan.transferId}: resumed, it ended ${status}`);
      if (wasFinished) {
        this.seen.finishedResumedAgain++;
        same(this.service.log.size, size, () => `${plan.transferId}: resuming a finished transfer appended`);
      } else this.seen.resumedByWorker++;
      this.check(`resumed ${plan.transferId}`);
    }
  }

  /** Everything finished: the wallet's and pool's transfers recovered, the venue's legs confirmed, the jobs run again, the trades' transfers resumed. */
  async drain(): Promise<void> {
    for (let round = 0; round < 10; round++) {
      await this.w.recover();
      for (const [transferId, leg] of Object.entries(this.w.pool(this.poolId).pending))
        await this.w.settle(this.poolId, transferId, 'confirmed', leg.amountMicro);
      await this.rerunInterrupted();
      await this.recoverTrades();
      const unfinished = this.recordedPlans().filter(({ plan }) => !this.finished(plan));
      if (unfinished.length === 0 && Object.keys(this.w.pool(this.poolId).pending).length === 0 && this.groups.every((g) => this.executed(g.signalKey))) return;
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
    const margins = data.trades.map((t) =>
      'marginMicro' in t.size ? t.size.marginMicro : Number((BigInt(free) * BigInt(Math.round(t.size.percent * 100))) / 10_000n),
    );
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
   * After every action and every runner step:
   * - the pool world's checks (../pool/world.ts World.check): money conserved between the wallet,
   *   the pool's currentBalanceUsd (confirmedIn − confirmedOut + realized − feesCharged), what is
   *   in flight and the fees settled, = START + deposits + Σ PnL the pool realized; nothing
   *   negative; currentBalanceUsd ≥ locked + pendingOut (free capital never negative); locked = Σ
   *   margins of the pool's openTrades;
   * - property 1: every live (pending/open) trade is open in the pool with its margin
   *   marginFor(notional, leverage);
   * - property 2: the pool's realized = Σ realized PnL of the trades it closed (a released trade
   *   realizes 0), each TradeClosed once per trade, its PnL the trade's (its return's amount − margin);
   * - property 3 with the trades: capital confirmed in + Σ PnL the trades realized = the pool's
   *   currentBalanceUsd + confirmedOut + fees charged + the PnL of trades not paid back yet;
   * - property 5: fees charged ≤ successFeePercent% × max(0, the highest realized PnL so far).
   */
  check(context: string): void {
    this.w.check(context);
    const pool = this.pool();
    const { ledger } = pool;
    // 1. margins
    for (const id of this.tradeIds) {
      const s = this.trade(id);
      if (live(s)) same(pool.openTrades[id]?.marginMicro, marginFor(s.notionalMicro, s.leverage), () => `${context}: live trade ${id}'s margin in the pool`);
    }
    same(
      ledger.locked,
      Object.values(pool.openTrades).reduce((sum, open) => sum + open.marginMicro, 0),
      () => `${context}: locked is the open trades' margins`,
    );
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
    for (const id of this.tradeIds) {
      const s = this.trade(id);
      if (!requested(s)) continue;
      tradesRealized += s.realizedPnlMicro;
      if (!closes.has(id)) notPaidBack += s.realizedPnlMicro;
    }
    same(
      ledger.confirmedIn + tradesRealized,
      currentBalanceUsd(ledger) + ledger.confirmedOut + ledger.feesCharged + notPaidBack,
      () =>
        `${context}: capital in ${ledger.confirmedIn} + trades' PnL ${tradesRealized} = balance + out ${ledger.confirmedOut} + fees ${ledger.feesCharged} + PnL not paid back ${notPaidBack}`,
    );
    // 5. fees
    this.peakRealized = Math.max(this.peakRealized, ledger.realized);
    const [num, den] = percentFraction(pool.terms.successFeePercent);
    ensure(
      BigInt(ledger.feesCharged) * den <= BigInt(Math.max(0, this.peakRealized)) * num,
      () => `${context}: fees ${ledger.feesCharged} above ${pool.terms.successFeePercent}% of the peak realized ${this.peakRealized}`,
    );
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
    for (const { plan } of this.recordedPlans()) ensure(this.finished(plan), () => `transfer ${plan.transferId} unfinished`);
    let locked = 0;
    let realized = 0;
    for (const id of this.tradeIds) {
      const s = this.trade(id);
      if (s.status === 'none' && pool.trades.get(id) === undefined) continue; // a group whose signal was skipped before the pool decided
      if (live(s)) locked += marginFor(s.notionalMicro, s.leverage);
      if (ended(s)) realized += s.realizedPnlMicro;
      same(pool.trades.get(id), live(s) ? 'open' : s.status === 'none' ? 'refused' : 'closed', () => `trade ${id} (${s.status}) in the pool`);
    }
    same(pool.ledger.locked, locked, () => 'locked = Σ margins of the live trades');
    same(Object.keys(pool.openTrades).length, this.liveTrades().length, () => "the pool's open trades are the live ones");
    same(pool.ledger.realized, realized, () => 'realized = Σ PnL of the trades that ended');
    for (const group of this.groups) {
      const states = group.tradeIds.map((id) => this.trade(id));
      const fates = group.tradeIds.map((id) => pool.trades.get(id));
      if (fates.every((f) => f === 'refused'))
        ensure(
          states.every((s) => s.status === 'none'),
          () => `refused group ${group.tradeIds} requested a trade`,
        );
      else
        ensure(
          fates.every((f) => f !== 'refused'),
          () => `group ${group.tradeIds} partly refused`,
        );
      if (states.some((s) => s.status === 'rejected')) {
        ensure(!states.some(live), () => `group ${group.tradeIds}: one rejected, another live`);
        if (states.some((s) => s.status === 'closed')) this.seen.undoneBothOrNeither++;
      }
    }
  }
}

export type { OpenIntent };
