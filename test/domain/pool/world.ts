// A world of one user's wallet and a few pools for the pool ledger's property test
// (conservation.test.ts), on the real code over an in-memory event log
// (test/support/memory-service.ts): the real dispatcher and handle, the real wallet and pool
// deciders, the real transfer runner and step commands (commands/transfers/), a pending leg settled
// by the real SettleTransfer command, and the recovery resuming every debit by the real
// ResumeTransfer command. The world only watches: it folds every append into the states it checks,
// and checks each pool decision against the state it was decided on. Every amount is integer
// micro-USD, compared exactly. The invariants it checks are stated where they are checked
// (World.check and World.checkDecision).
import assert from 'node:assert/strict';
import type { Dispatch } from '../../../commands/dispatch.ts';
import type { PoolFact } from '../../../commands/subscriptions/commands.ts';
import { poolDecider } from '../../../domain/pool/decide.ts';
import type { AgentTerms, PoolEvent, PoolEventOf } from '../../../domain/pool/events.ts';
import { currentBalanceUsd, poolFigures, splitFee } from '../../../domain/pool/ledger.ts';
import { poolId, poolStream, type FollowedPool, type PoolState } from '../../../domain/pool/state.ts';
import { mulDiv, percentFraction } from '../../../domain/shared/money.ts';
import type { PoolEndpoint, TransferPlan } from '../../../domain/transfer/plan.ts';
import { isFinished, planned, type TransferState, type TransferStatus } from '../../../domain/transfer/process.ts';
import { walletDecider } from '../../../domain/wallet/decide.ts';
import type { WalletContext, WalletEvent } from '../../../domain/wallet/events.ts';
import { balanceOf, walletStream, type WalletState } from '../../../domain/wallet/state.ts';
import { userStream } from '../../../domain/user/fields.ts';
import type { RecordedEvent } from '../../../infra/eventstore/port.ts';
import { Crash, MemoryService, type Faults } from '../../support/memory-service.ts';
import { terms } from './fixtures.ts';

/** The virtual start (1000 USD); the real context starts at 0 and grows by deposits. */
export const START = 1_000_000_000;
export const USER = 'u1';
const NOW = new Date('2025-03-04T05:06:07.000Z');

/** Two agents: a spot one at 20 %, a perp one (a fee buffer) at 12.5 %; each followed in both contexts. */
export const AGENTS: ReadonlyArray<{ id: string; terms: AgentTerms }> = [
  { id: 'a1', terms },
  { id: 'a2', terms: { ...terms, agentName: 'Perp Scalper', venue: 'PERP_VENUE', maxLeverage: 5, successFeePercent: 12.5 } },
];
export const CONTEXTS: ReadonlyArray<WalletContext> = ['virtual', 'real'];
/** The pools of the world, by index: agent-major, context-minor. */
export const POOLS = AGENTS.flatMap((a) =>
  CONTEXTS.map((walletContext) => ({ agentId: a.id, walletContext, terms: a.terms, id: poolId(USER, a.id, walletContext) })),
);

/** What the random runs went through, counted across all runs, so that a generator that stops reaching a path fails the test. */
export const reached = {
  deposit: 0,
  addCompleted: 0,
  addPending: 0,
  addRefused: 0,
  addRejectedRefunded: 0,
  followSettingsUpdated: 0,
  poolReopened: 0,
  withdrawPaid: 0,
  withdrawPending: 0,
  withdrawRefused: 0,
  stopPaidOut: 0,
  stopPendingAtVenue: 0,
  stopEmpty: 0,
  stopRefusedOpenTrades: 0,
  settleAddConfirmed: 0,
  settleAddFailed: 0,
  settleOutConfirmedFull: 0,
  partialReclaim: 0,
  partialAddRefused: 0,
  settleOutFailed: 0,
  settleAfterClose: 0,
  feeSettledAtWithdrawal: 0,
  feeSettledAtStop: 0,
  feeWaivedBelowPeak: 0,
  feeNetOfOpenLoss: 0,
  feePartlyDeferred: 0,
  tradeOpened: 0,
  tradeOpenedByPercent: 0,
  groupOpened: 0,
  groupRefused: 0,
  tradeRefused: 0,
  tradeReleased: 0,
  tradeMarked: 0,
  closedWithProfit: 0,
  closedWithLoss: 0,
  closedLosingAllMargin: 0,
  closeRefusedBeyondMargin: 0,
  crashed: 0,
  crashResumed: 0,
  stepRepeated: 0,
  settlementRepeated: 0,
  finishedResumedAgain: 0,
};

type Reached = typeof reached;

/** Per pool-opening (from an AgentFollowed to its PoolClosed): the fees settled and the peak of cumulative realized PnL. */
interface Opening {
  feesMicro: number;
  peakRealizedMicro: number;
}

const poolIdOf = (e: PoolEndpoint): string => poolId(e.userId, e.agentId, e.walletContext);

/** Where a transfer was last left: its status and plan (as the runner or a command answered), or crashed. */
type Known = { status: TransferStatus; plan: TransferPlan } | 'crashed';

export class World {
  readonly service: MemoryService;
  wallet: WalletState = walletDecider.initialState();
  /** every pool a stream was written for, as folded append by append */
  readonly pools = new Map<string, PoolState>();
  /** what came from outside: real deposits, and PnL realized by closed trades */
  depositsMicro = 0;
  realizedMicro = 0;
  /** success fees moved to the creator and the platform */
  feesMicro = 0;
  readonly openings = new Map<string, Opening>();
  readonly settlementIds = new Set<string>();
  /** where each transfer was last left by a request, a settlement or the recovery */
  readonly transfers = new Map<string, Known>();
  /** every invariant after every append, inside the commands too (a world around this one may check it itself) */
  checkEachAppend = true;
  /** the first check that failed inside an append (thrown again once the command answered) */
  failure: unknown = null;
  private counter = 0;
  /** the transfer whose leg is being settled: its known status catches up once SettleTransfer answers */
  private settling: string | null = null;

  constructor(
    readonly seen: Reached = reached,
    service = new MemoryService({ virtualStartMicro: START, now: NOW }),
  ) {
    this.service = service;
    service.given(userStream(USER), [
      {
        type: 'UserRegistered',
        data: {
          userId: USER,
          email: 'u1@example.com',
          username: 'u1',
          role: 'user',
          tier: 'free',
          virtualWalletMode: true,
          languageCode: 'en',
          registeredAt: NOW.toISOString(),
          signup: {},
        },
      },
    ]);
    const chained = service.onAppend;
    service.onAppend = (stream, before, appended) => {
      chained(stream, before, appended);
      try {
        this.fold(stream, appended);
        if (this.checkEachAppend && (stream.startsWith('pool-') || stream.startsWith('wallet-')))
          this.check(`${appended.map((e) => e.type).join(', ')} on ${stream}`);
      } catch (err) {
        this.failure ??= err;
        throw err;
      }
    };
  }

  nextId(kind: string): string {
    return `${kind}-${++this.counter}`;
  }

  pool(id: string): PoolState {
    return this.pools.get(id) ?? poolDecider.initialState();
  }

  followed(id: string): FollowedPool | null {
    const p = this.pool(id);
    return p.followed ? p : null;
  }

  figures(p: FollowedPool) {
    return poolFigures(p.ledger, {
      walletContext: p.walletContext,
      venue: p.terms.venue,
      maxLeverage: p.terms.maxLeverage,
      successFeePercent: p.terms.successFeePercent,
    });
  }

  walletBalance(context: WalletContext): number {
    return balanceOf(this.wallet, context, START);
  }

  poolEvents(id: string): PoolEvent[] {
    return this.service.events<PoolEvent>(poolDecider, id);
  }

  walletEvents(): WalletEvent[] {
    return this.service.events<WalletEvent>(walletDecider, USER);
  }

  // ---- what the streams record: folded, each pool decision checked against its state before ----

  private fold(stream: string, appended: RecordedEvent[]): void {
    if (stream === walletStream(USER)) {
      for (const e of appended as unknown as WalletEvent[]) {
        if (e.type === 'WalletDeposited') this.depositsMicro += e.data.amountMicro;
        this.wallet = walletDecider.evolve(this.wallet, e);
      }
      return;
    }
    if (!stream.startsWith('pool-')) return;
    const id = stream.slice('pool-'.length);
    const events = appended as unknown as PoolEvent[];
    const before = this.pool(id);
    this.checkDecision(id, before, events);
    let state = before;
    for (const e of events) {
      if (e.type === 'FeesSettled') this.checkFeeSettlement(id, state, e);
      if (e.type === 'AgentFollowed') this.openings.set(id, { feesMicro: 0, peakRealizedMicro: 0 });
      if (e.type === 'TradeClosed') this.realizedMicro += e.data.realizedPnlMicro;
      state = poolDecider.evolve(state, e);
      // The peak of cumulative realized PnL in this opening: what the high-water mark may charge on.
      const opening = this.openings.get(id);
      if (state.followed && opening) opening.peakRealizedMicro = Math.max(opening.peakRealizedMicro, state.ledger.realized);
    }
    this.pools.set(id, state);
  }

  /**
   * What a decision may do, given the state it was decided on (one append is one decision):
   * - a withdrawal (WithdrawalRequested, not a close) takes at most withdrawableUsd of that state;
   *   since the pool decides one command at a time and the reservation (pendingOut) or the payout
   *   (confirmedOut) lowers withdrawableUsd at once, two withdrawals never take the same dollar;
   * - a close (PoolClosed) is decided only with no open trade and no leg at the venue, settles every
   *   fee due (a real pool's), and pays out exactly what the pool holds after settling them;
   * - fees are settled only by a real pool, only when a withdrawal confirms or the user stops;
   * - a group of trades opens whole or not at all, by a followed pool, and its margins together
   *   never pass withdrawableUsd of that state.
   */
  private checkDecision(id: string, before: PoolState, events: PoolEvent[]): void {
    const fees = events.filter((e) => e.type === 'FeesSettled');
    const close = events.some((e) => e.type === 'PoolClosed');
    if (fees.length > 0) {
      ensure(before.followed && before.walletContext === 'real', () => `${id}: fees settled by a ${before.followed ? before.walletContext : 'closed'} pool`);
      const byConfirmedWithdrawal = events.some((e) => e.type === 'AllocationSettled' && e.data.direction === 'out' && e.data.outcome === 'confirmed');
      ensure(close || byConfirmedWithdrawal, () => `${id}: fees settled by ${events.map((e) => e.type).join(', ')}`);
      same(fees.length, 1, () => `${id}: one settlement per decision`);
    }
    const opened = events.flatMap((e) => (e.type === 'TradeOpened' ? [e.data.marginMicro] : []));
    if (opened.length > 0) {
      ensure(before.followed, () => `${id}: a trade opened in a pool not followed`);
      ensure(!events.some((e) => e.type === 'TradeRefused'), () => `${id}: part of a group opened`);
      const free = this.figures(before).withdrawableUsd;
      const locked = opened.reduce((sum, m) => sum + m, 0);
      ensure(locked <= free, () => `${id}: trades locked ${locked}, more than the ${free} free`);
      return;
    }
    const out = events.filter((e): e is PoolEventOf<'WithdrawalRequested'> => e.type === 'WithdrawalRequested');
    if (!before.followed || (out.length === 0 && !close)) return;
    if (!close) {
      for (const e of out) {
        const withdrawable = this.figures(before).withdrawableUsd;
        ensure(
          e.data.transfer.amountMicro <= withdrawable,
          () => `${id}: a withdrawal of ${e.data.transfer.amountMicro} took more than the ${withdrawable} withdrawable`,
        );
      }
      return;
    }
    same(Object.keys(before.openTrades).length, 0, () => `${id}: closed with open trades`);
    same(Object.keys(before.pending).length, 0, () => `${id}: closed with a leg at the venue`);
    const feeMicro = fees.reduce((sum, e) => sum + (e.type === 'FeesSettled' ? e.data.feeMicro : 0), 0);
    if (before.walletContext === 'real') {
      // A settlement deferred for want of free money is settled at the stop: none is forgiven.
      const [num, den] = percentFraction(before.terms.successFeePercent);
      const due = Math.max(0, mulDiv(before.ledger.realized + Math.min(0, before.ledger.unrealized), num, den) - before.ledger.feesCharged);
      same(feeMicro, due, () => `${id}: a stop settles every fee due`);
    }
    const held = currentBalanceUsd(before.ledger) - feeMicro;
    same(
      out.reduce((sum, e) => sum + e.data.transfer.amountMicro, 0),
      Math.max(0, held),
      () => `${id}: a close pays out what the pool holds after its fees`,
    );
    assert.equal(events.at(-1)?.type, 'PoolClosed');
  }

  /**
   * A fee settlement, against the state it is folded into:
   * - its figures are the state's at the time: realizedMicro, unrealizedMicro, feesChargedBeforeMicro
   *   and successFeePercent, and feeMicro = successFeePercent% × (realized + min(0, unrealized))
   *   (floored to the micro-USD) − feesChargedBefore, or what is free if that is less (currentBalance
   *   − locked − pendingOut: a fee never takes open trades' margin nor a withdrawal on its way),
   *   split so that platform + creator = fee;
   * - Σ fees of one pool-opening ≤ successFeePercent% × max(0, peak cumulative realized PnL of
   *   that opening): a fee is never charged twice on the same profit (the high-water mark), never
   *   on unrealized gains, and never on principal (an opening with only losses or no PnL pays none).
   */
  private checkFeeSettlement(id: string, state: PoolState, e: PoolEventOf<'FeesSettled'>): void {
    ensure(state.followed, () => `${id}: fees settled by a closed pool`);
    const { ledger, terms: poolTerms } = state;
    const d = e.data;
    same(d.realizedMicro, ledger.realized, () => `${id}: the settlement's realized is the state's`);
    same(d.unrealizedMicro, ledger.unrealized, () => `${id}: the settlement's unrealized is the state's`);
    same(d.feesChargedBeforeMicro, ledger.feesCharged, () => `${id}: the settlement's feesChargedBefore is the state's`);
    assert.equal(d.successFeePercent, poolTerms.successFeePercent);
    const [num, den] = percentFraction(poolTerms.successFeePercent);
    const due = mulDiv(d.realizedMicro + Math.min(0, d.unrealizedMicro), num, den) - d.feesChargedBeforeMicro;
    const free = currentBalanceUsd(ledger) - ledger.locked - ledger.pendingOut;
    same(d.feeMicro, Math.min(due, free), () => `${id}: fee = p% × profit − charged, up to what is free`);
    if (d.feeMicro < due) this.seen.feePartlyDeferred++;
    ensure(d.feeMicro > 0, () => `${id}: a settlement of ${d.feeMicro}`);
    if (d.unrealizedMicro < 0) this.seen.feeNetOfOpenLoss++;
    assert.equal(d.platformMicro + d.creatorMicro, d.feeMicro);
    assert.deepEqual(splitFee(d.feeMicro), { platform: d.platformMicro, creator: d.creatorMicro });
    ensure(!this.settlementIds.has(d.settlementId), () => `${id}: settlement id ${d.settlementId} reused`);
    this.settlementIds.add(d.settlementId);
    const opening = this.openings.get(id)!;
    opening.feesMicro += d.feeMicro;
    this.feesMicro += d.feeMicro;
    assert.ok(
      BigInt(opening.feesMicro) * den <= BigInt(Math.max(0, opening.peakRealizedMicro)) * num,
      `${id}: fees ${opening.feesMicro} exceed ${poolTerms.successFeePercent}% of the peak realized ${opening.peakRealizedMicro}`,
    );
  }

  // ---- the commands and the runner, as a request, the venue or the recovery sends them ----

  /** Throws what a check found inside an append, once the command answered. */
  private rethrow(): void {
    if (this.failure) throw this.failure;
  }

  /** A real deposit (DepositWallet); `deposited` false when the id was credited already. */
  async deposit(depositId: string, amountMicro: number): Promise<boolean> {
    const { deposited } = await this.service.send('DepositWallet', { userId: USER, depositId, amountMicro });
    this.rethrow();
    return deposited;
  }

  /** A pool fact (RecordPoolFact: trades opened, marked, closed); returns the events it appended, or throws the refusal. */
  async fact(id: string, fact: PoolFact): Promise<PoolEvent[]> {
    const size = this.poolEvents(id).length;
    await this.service.send('RecordPoolFact', { poolId: id, fact });
    this.rethrow();
    return this.poolEvents(id).slice(size);
  }

  /**
   * Runs a transfer with the real runner, checking every invariant after every step. `twice`: every
   * step is sent again and must append nothing and report the same fact. `crashAfter`: the process
   * stops after that many steps, the last one appended, its outcome lost (the transfer is then
   * finished by a settlement or the recovery, from its debit event).
   */
  async run(start: TransferState, opts: Faults = {}): Promise<{ end: TransferState | null; appended: number }> {
    const id = start.plan.transferId;
    const size = this.service.log.size;
    if (opts.twice) this.seen.stepRepeated++;
    const end = await this.service.run(start, opts, (step) => {
      this.rethrow();
      this.check(`${step} ${id}`);
    });
    this.rethrow();
    if (end === null) this.seen.crashed++;
    this.transfers.set(id, end ? { status: end.status, plan: end.plan } : 'crashed');
    return { end, appended: this.service.log.size - size };
  }

  /** The stream that recorded a transfer's debit (and its plan): where ResumeTransfer reads it. */
  private sourceOf(plan: TransferPlan): string {
    return plan.from.kind === 'wallet' ? walletStream(USER) : poolStream(poolIdOf(plan.from as PoolEndpoint));
  }

  /** Resumes a transfer from its debit event (ResumeTransfer); one this world saw finished must append nothing and end the same. */
  async resume(plan: TransferPlan): Promise<TransferStatus> {
    const last = this.transfers.get(plan.transferId);
    const size = this.service.log.size;
    const { status } = await this.service.send('ResumeTransfer', { transferId: plan.transferId, sourceStream: this.sourceOf(plan) });
    this.rethrow();
    if (last === 'crashed' && status !== 'planned') this.seen.crashResumed++;
    if (last && last !== 'crashed' && isFinished(last as TransferState)) {
      this.seen.finishedResumedAgain++;
      same(this.service.log.size, size, () => `${plan.transferId}: resuming a finished transfer appended`);
      same(status, last.status, () => `${plan.transferId}: resuming a finished transfer ended otherwise`);
    }
    this.transfers.set(plan.transferId, { status, plan: last && last !== 'crashed' ? last.plan : plan });
    this.check(`resumed ${plan.transferId}`);
    return status;
  }

  /** The plans recorded by debit events (WalletDebited, WithdrawalRequested): where the recovery reads them. */
  debitPlans(): TransferPlan[] {
    const plans: TransferPlan[] = this.walletEvents().flatMap((e) => (e.type === 'WalletDebited' ? [e.data.transfer] : []));
    for (const id of this.pools.keys()) for (const e of this.poolEvents(id)) if (e.type === 'WithdrawalRequested') plans.push(e.data.transfer);
    return plans;
  }

  /** The recovery worker: every recorded debit is resumed from its debit event (a finished one changes nothing). */
  async recover(): Promise<void> {
    for (const plan of this.debitPlans()) await this.resume(plan);
  }

  /**
   * The venue answers a pool's pending leg (SettleTransfer: the pool records it, the transfer goes on
   * from its source). `twice`: the answer is sent again and appends nothing; `crashAfter`: the
   * process dies at that append, its answer lost (the recovery finishes the transfer).
   */
  async settle(id: string, transferId: string, outcome: 'confirmed' | 'failed', amountMicro: number, opts: Faults = {}): Promise<void> {
    const plan = this.debitPlans().find((p) => p.transferId === transferId);
    ensure(plan !== undefined, () => `no debit event for the settled ${transferId}`);
    const data = { poolId: id, transferId, outcome, amountMicro };
    const dispatch: Dispatch = opts.crashAfter ? this.service.dying(opts.crashAfter, true) : this.service.dispatch;
    this.settling = transferId;
    try {
      const { status } = await this.service.send('SettleTransfer', data, dispatch);
      this.transfers.set(transferId, { status, plan });
    } catch (err) {
      if (!(err instanceof Crash)) throw err;
      this.seen.crashed++;
      this.transfers.set(transferId, 'crashed');
    } finally {
      this.settling = null;
    }
    this.rethrow();
    this.check(`SettleTransfer ${transferId}`);
    if (opts.twice) {
      this.seen.settlementRepeated++;
      const size = this.service.log.size;
      const known = this.transfers.get(transferId);
      const { status } = await this.service.send('SettleTransfer', data);
      this.rethrow();
      // A settlement sent again finishes a crashed transfer; a finished one appends nothing.
      if (known !== 'crashed') same(this.service.log.size, size, () => `${transferId}: a settlement repeated appended again`);
      this.transfers.set(transferId, { status, plan });
    }
  }

  // ---- the invariants ----

  /**
   * Where every micro-USD is, from what the streams recorded (the endpoints' facts, which are what
   * the process states are folded from):
   * - wallet: both contexts' balances (the virtual one holds START before its first use);
   * - pools: each followed pool's currentBalanceUsd = confirmedIn − confirmedOut + realized −
   *   feesCharged (a withdrawal reserved at the venue is still in it until it confirms);
   * - venueIn: adds on their way in, the pools' pending `in` legs (pendingIn; process `pending`);
   * - what a closed pool still holds: closingPayouts, its closing payout while the venue has not
   *   answered (a pending `out` leg; a followed pool's are in its currentBalanceUsd), and residue,
   *   what the venue did not pay out of it (residueMicro, which a later follow opens with);
   * - debitedNotCredited: wallet debits neither given back, nor credited, nor pending in their
   *   pool (process `debited` before its credit, or `rejected` before its refund);
   * - paidNotCredited: payouts a pool recorded (fate `paid`) that the wallet has not credited
   *   (process `debited` of a pool → wallet transfer);
   * - fees: Σ FeesSettled.feeMicro, gone to the creator and the platform.
   * Conservation: their sum = START + Σ deposits + Σ realized PnL, to the micro-USD.
   */
  audit() {
    const wallet = this.walletBalance('virtual') + this.walletBalance('real');
    let pools = 0;
    let venueIn = 0;
    let closingPayouts = 0;
    let residue = 0;
    let paidNotCredited = 0;
    for (const p of this.pools.values()) {
      if (p.followed) pools += currentBalanceUsd(p.ledger);
      else residue += p.residueMicro ?? 0;
      for (const leg of Object.values(p.pending)) {
        if (leg.direction === 'in') venueIn += leg.amountMicro;
        else if (!p.followed) closingPayouts += leg.amountMicro;
      }
      for (const [transferId, fate] of p.transfers.entries()) {
        if (fate === 'paid' && !this.wallet.credits.get(transferId)) paidNotCredited += p.payouts.get(transferId) ?? 0;
      }
    }
    let debitedNotCredited = 0;
    for (const e of this.walletEvents()) {
      if (e.type !== 'WalletDebited') continue;
      const { transferId, to } = e.data.transfer;
      const paid = this.wallet.debits.get(transferId)!;
      if (paid.refunded || to.kind !== 'pool') continue;
      const fate = this.pool(poolIdOf(to)).transfers.get(transferId);
      if (fate !== 'credited' && fate !== 'pending') debitedNotCredited += paid.amountMicro;
    }
    return { wallet, pools, venueIn, closingPayouts, residue, debitedNotCredited, paidNotCredited, fees: this.feesMicro };
  }

  /** Every invariant, after every step and every action. */
  check(context: string): void {
    const a = this.audit();
    const held = a.wallet + a.pools + a.venueIn + a.closingPayouts + a.residue + a.debitedNotCredited + a.paidNotCredited + a.fees;
    for (const [k, v] of Object.entries(a)) ensure(Number.isSafeInteger(v) && v >= 0, () => `${context}: ${k} = ${v}`);
    const owed = START + this.depositsMicro + this.realizedMicro;
    same(
      held,
      owed,
      () =>
        `${context}: money not conserved: ${JSON.stringify(a)} sums to ${held}, START + deposits ${this.depositsMicro} + realized ${this.realizedMicro} = ${owed}`,
    );

    // No negative balances.
    for (const c of CONTEXTS) ensure(this.walletBalance(c) >= 0, () => `${context}: ${c} wallet balance ${this.walletBalance(c)}`);
    for (const [id, p] of this.pools) {
      const legs = Object.values(p.pending);
      if (!p.followed) {
        // A closed pool keeps only its closing payout at the venue.
        ensure(
          legs.every((l) => l.direction === 'out'),
          () => `${context}: ${id} closed with an add at the venue`,
        );
        continue;
      }
      const l = p.ledger;
      const f = this.figures(p);
      for (const k of ['confirmedIn', 'confirmedOut', 'locked', 'pendingIn', 'pendingOut', 'feesCharged'] as const) {
        ensure(Number.isSafeInteger(l[k]) && l[k] >= 0, () => `${context}: ${id} ${k} = ${l[k]}`);
      }
      ensure(f.allocatedUsd >= 0, () => `${context}: ${id} allocatedUsd ${f.allocatedUsd}`);
      ensure(f.currentBalanceUsd >= 0, () => `${context}: ${id} currentBalanceUsd ${f.currentBalanceUsd}`);
      // What is reserved (pendingOut) and locked in trades is in the pool: the venue can pay both.
      ensure(
        f.currentBalanceUsd - l.locked - l.pendingOut >= 0,
        () => `${context}: ${id} holds ${f.currentBalanceUsd} < locked ${l.locked} + pendingOut ${l.pendingOut}`,
      );
      // withdrawableUsd never exceeds what may leave.
      ensure(
        f.withdrawableUsd >= 0 && f.withdrawableUsd <= Math.max(0, f.currentBalanceUsd - l.locked - l.pendingOut),
        () => `${context}: ${id} withdrawableUsd ${f.withdrawableUsd}`,
      );
      assert.equal(f.pendingDeltaUsd, l.pendingIn - l.pendingOut);
      // The ledger's pending figures are the legs at the venue; locked is the open trades' margin.
      const sum = (d: 'in' | 'out') => legs.filter((x) => x.direction === d).reduce((s, x) => s + x.amountMicro, 0);
      same(l.pendingIn, sum('in'), () => `${context}: ${id} pendingIn is not its legs`);
      same(l.pendingOut, sum('out'), () => `${context}: ${id} pendingOut is not its legs`);
      assert.equal(
        l.locked,
        Object.values(p.openTrades).reduce((s, t) => s + t.marginMicro, 0),
      );
      if (p.walletContext === 'virtual') {
        // Virtual: everything settles at once and no fee is ever settled.
        same(legs.length, 0, () => `${context}: ${id} virtual leg at the venue`);
        same(l.feesCharged, 0, () => `${context}: ${id} virtual fees settled`);
      }
    }
    this.checkProcesses(context);
  }

  /**
   * The process state this world's runner left each transfer in matches its endpoints' records:
   * `pending` has its leg at the venue; `debited` is money on its way (a wallet → pool credit not
   * recorded, or a pool payout not credited to the wallet); `rejected` is not refunded yet;
   * `completed` is credited (or paid nothing); `compensated` refunded; `failed` moved nothing.
   */
  private checkProcesses(context: string): void {
    for (const [transferId, s] of this.transfers) {
      // A crashed one is left to the recovery; the one being settled is resumed next.
      if (s === 'crashed' || transferId === this.settling) continue;
      const { from, to } = s.plan;
      const pool = to.kind === 'pool' ? this.pool(poolIdOf(to)) : from.kind === 'pool' ? this.pool(poolIdOf(from)) : null;
      assert.ok(pool);
      const fate = pool.transfers.get(transferId);
      const refunded = this.wallet.debits.get(transferId)?.refunded;
      const credited = this.wallet.credits.get(transferId) !== undefined;
      const why = () => `${context}: ${transferId} is ${s.status} but its pool records ${fate}`;
      switch (s.status) {
        case 'pending':
          ensure(fate === 'pending' && Object.hasOwn(pool.pending, transferId), why);
          break;
        case 'debited':
          if (to.kind === 'pool') ensure(fate === undefined && refunded === false, why);
          else ensure(fate === 'paid' && !credited, why);
          break;
        case 'rejected':
          ensure((fate === 'rejected' || fate === 'failed') && refunded === false, why);
          break;
        case 'completed':
          if (to.kind === 'pool') ensure(fate === 'credited', why);
          else ensure(credited || (pool.payouts.get(transferId) ?? 0) === 0, why);
          break;
        case 'compensated':
          ensure(refunded === true, why);
          break;
        case 'failed':
          if (from.kind === 'wallet') ensure(this.wallet.debits.get(transferId) === undefined, why);
          else ensure(fate === undefined || fate === 'failed', why);
          break;
        case 'planned':
          assert.fail(why());
      }
    }
  }
}

/** Asserts `cond`; the message is built only on a failure (the checks run after every step). */
function ensure(cond: boolean, message: () => string): asserts cond {
  if (!cond) assert.fail(message());
}

/** Asserts `actual === expected`, naming both; the message is built only on a failure. */
function same<T>(actual: T, expected: T, message: () => string): void {
  if (actual !== expected) assert.fail(`${message()}: ${String(actual)} !== ${String(expected)}`);
}

export { planned };
