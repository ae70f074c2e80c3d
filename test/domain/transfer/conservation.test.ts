// Money is conserved by transfers: random follows of one wallet into several pools, run through
// the transfer process with the wallet and pool deciders (pure: events folded into states), with
// refused debits, rejected credits, repeated transfer ids, steps delivered twice and crashes
// finished by a retried request or by the recovery. Every amount is integer micro-USD, compared
// exactly.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import type { FollowOpening } from '../../../domain/pool/events.ts';
import { poolDecider } from '../../../domain/pool/decide.ts';
import { nextTransferId } from '../../../domain/pool/queries.ts';
import { poolId, type PoolState } from '../../../domain/pool/state.ts';
import { DomainError } from '../../../domain/shared/errors.ts';
import { endpointKey, type TransferPlan } from '../../../domain/transfer/plan.ts';
import { decide, evolve, isFinished, planned, resumed, type TransferOutcome, type TransferState, type TransferStep } from '../../../domain/transfer/process.ts';
import { walletDecider } from '../../../domain/wallet/decide.ts';
import type { WalletContext, WalletEvent } from '../../../domain/wallet/events.ts';
import { balanceOf, type WalletState } from '../../../domain/wallet/state.ts';
import { at } from '../../support/given-when-then.ts';
import { settings, terms } from '../pool/fixtures.ts';

const START = 1_000_000_000; // the virtual start: 1000 USD; the real context starts at 0
const USER = 'u1';
const AGENTS = ['a1', 'a2', 'a3'];
const metadata = at('2025-01-02T03:04:05.000Z');

/** One follow request, and what goes wrong around it. */
interface Follow {
  agent: number;
  walletContext: WalletContext;
  amountMicro: number;
  /** the plan carries a follow (it can open the pool); without one only an open pool takes the credit */
  follow: FollowOpening | null;
  /** reuse an id this pool was already asked (index into them) instead of the pool's next one */
  reuse: number | null;
  /** every step is delivered twice, as a runner and the recovery may both send it */
  twice: boolean;
  /** the process stops after this many steps: the last one appended, its outcome lost */
  crashAfter: number | null;
  /** after a crash the user retries at once, with this amount (else the recovery finishes it later) */
  retryAmountMicro: number | null;
  /** the recovery runs before this request */
  recoverFirst: boolean;
}

const amount = fc.oneof(fc.integer({ min: 1, max: START / 4 }), fc.integer({ min: START / 4, max: 2 * START }));
const followArb: fc.Arbitrary<Follow> = fc.record({
  agent: fc.integer({ min: 0, max: AGENTS.length - 1 }),
  walletContext: fc.constantFrom<WalletContext>('virtual', 'virtual', 'virtual', 'virtual', 'real'),
  amountMicro: amount,
  follow: fc.constantFrom<FollowOpening | null>({ settings, terms }, { settings: { ...settings, isPaused: true }, terms }, null),
  reuse: fc.option(fc.nat({ max: 5 }), { freq: 3 }),
  twice: fc.boolean(),
  crashAfter: fc.option(fc.integer({ min: 1, max: 3 }), { freq: 2 }),
  retryAmountMicro: fc.option(amount),
  recoverFirst: fc.boolean(),
});

/** What the random runs went through, so that a generator that stops reaching a path fails the test. */
const seen = { refused: 0, rejected: 0, refunded: 0, retriedDebit: 0, amountReplaced: 0, recovered: 0, repeatedId: 0, twice: 0 };

/** The wallet, the pools and the events they recorded: the streams of one user. */
class World {
  wallet: WalletState = walletDecider.initialState();
  readonly walletEvents: WalletEvent[] = [];
  readonly pools = new Map<string, PoolState>();
  /** ids each pool was asked for, in order */
  readonly idsAsked = new Map<string, string[]>();

  pool(id: string): PoolState {
    return this.pools.get(id) ?? poolDecider.initialState();
  }

  /** A step as commands/transfers/steps.ts runs it: the command, then the fact its endpoint holds. */
  perform(step: TransferStep): { outcome: TransferOutcome; appended: number } {
    switch (step.type) {
      case 'DebitWallet': {
        const { transfer } = step.data;
        let events: WalletEvent[];
        try {
          events = walletDecider.decide({ type: 'DebitWallet', data: { transfer, virtualStartMicro: START }, metadata }, this.wallet);
        } catch (err) {
          if (err instanceof DomainError) return { outcome: { type: 'DebitRefused', error: err }, appended: 0 };
          throw err;
        }
        this.appendWallet(events);
        const paid = this.wallet.debits.get(transfer.transferId)!;
        return { outcome: paid.refunded ? { type: 'Refunded' } : { type: 'Debited', amountMicro: paid.amountMicro }, appended: events.length };
      }
      case 'CreditPool': {
        const { to, transferId } = step.data.transfer;
        const id = endpointKey(to).slice('pool:'.length);
        const before = this.pool(id);
        const events = poolDecider.decide({ type: 'CreditPool', data: step.data, metadata }, before);
        const after = events.reduce(poolDecider.evolve, before);
        this.pools.set(id, after);
        const outcome: TransferOutcome = after.transfers.get(transferId) === 'rejected' ? { type: 'CreditRejected', reason: 'rejected' } : { type: 'Credited' };
        return { outcome, appended: events.length };
      }
      case 'RefundWallet': {
        const events = walletDecider.decide({ type: 'RefundWallet', data: { transferId: step.data.transferId }, metadata }, this.wallet);
        this.appendWallet(events);
        return { outcome: { type: 'Refunded' }, appended: events.length };
      }
      default:
        throw new Error(`${step.type}: this world only moves money from the wallet into pools`);
    }
  }

  private appendWallet(events: WalletEvent[]): void {
    this.walletEvents.push(...events);
    this.wallet = events.reduce(walletDecider.evolve, this.wallet);
  }

  /** The plans the wallet debited, from its own events (as the recovery reads them). */
  debits(): TransferPlan[] {
    return this.walletEvents.flatMap((e) => (e.type === 'WalletDebited' ? [e.data.transfer] : []));
  }

  /** Debited, not given back, not credited: money on its way. */
  inFlight(): TransferPlan[] {
    return this.debits().filter((plan) => {
      const { to, transferId } = plan;
      return !this.wallet.debits.get(transferId)!.refunded && this.pool(endpointKey(to).slice('pool:'.length)).transfers.get(transferId) !== 'credited';
    });
  }

  audit() {
    const wallet = balanceOf(this.wallet, 'virtual', START) + balanceOf(this.wallet, 'real', START);
    const pools = [...this.pools.values()].reduce((sum, p) => sum + (p.followed ? p.ledger.confirmedIn : 0), 0);
    // The wallet's own record of what it paid, not the plan's amount: that is what must arrive.
    const inFlight = this.inFlight().reduce((sum, plan) => sum + this.wallet.debits.get(plan.transferId)!.amountMicro, 0);
    return { wallet, pools, inFlight };
  }

  /** After every step: nothing created or lost, nothing negative, every figure an exact integer. */
  assertConserved(context: string): void {
    const { wallet, pools, inFlight } = this.audit();
    for (const n of [wallet, pools, inFlight]) assert.ok(Number.isSafeInteger(n), `${context}: ${n} is not an exact integer`);
    assert.equal(wallet + pools + inFlight, START, `${context}: wallet ${wallet} + pools ${pools} + in flight ${inFlight} != start ${START}`);
    this.assertNoneNegative(context);
  }

  assertNoneNegative(context: string): void {
    for (const [c, balance] of Object.entries(this.wallet.balances)) assert.ok(balance >= 0, `${context}: ${c} wallet balance ${balance}`);
    for (const [id, p] of this.pools) if (p.followed) assert.ok(p.ledger.confirmedIn >= 0, `${context}: pool ${id} holds ${p.ledger.confirmedIn}`);
  }

  /**
   * Runs a transfer as commands/transfers/run.ts does, step by step; `crashAfter` stops it with
   * its last step appended and the outcome lost. Returns the state it ended in, or null on a crash.
   */
  run(start: TransferState, opts: { twice: boolean; crashAfter: number | null }): TransferState | null {
    let state = start;
    let steps = 0;
    for (let step = decide(state); step; step = decide(state)) {
      const { outcome } = this.perform(step);
      this.assertConserved(`${step.type} ${start.plan.transferId}`);
      if (opts.twice) {
        // The same step again appends nothing and reports the same fact.
        const again = this.perform(step);
        seen.twice++;
        assert.equal(again.appended, 0, `${step.type} delivered twice appended again`);
        assert.equal(again.outcome.type, outcome.type, `${step.type} delivered twice reported another fact`);
        this.assertConserved(`${step.type} again`);
      }
      if (opts.crashAfter === ++steps) return null;
      if (outcome.type === 'DebitRefused') seen.refused++;
      if (outcome.type === 'CreditRejected') seen.rejected++;
      if (outcome.type === 'Refunded') seen.refunded++;
      if (outcome.type === 'Debited' && outcome.amountMicro !== state.plan.amountMicro) seen.amountReplaced++;
      state = evolve(state, outcome);
    }
    return state;
  }

  /** The recovery worker: every debit neither given back nor credited is resumed from its debit event. */
  recover(): void {
    for (const plan of this.inFlight()) {
      seen.recovered++;
      const end = this.run(resumed(plan), { twice: false, crashAfter: null });
      assert.ok(end && isFinished(end), `the recovery left ${plan.transferId} unfinished`);
    }
  }

  /** A follow request: a plan under the pool's next id (or a reused one), run through the process. */
  request(f: Follow): void {
    if (f.recoverFirst) this.recover();
    const agentId = AGENTS[f.agent]!;
    const pool = poolId(USER, agentId, f.walletContext);
    const asked = this.idsAsked.get(pool) ?? [];
    this.idsAsked.set(pool, asked);
    const planFor = (amountMicro: number, reuse: number | null): TransferPlan => {
      const transferId = reuse !== null && asked.length > 0 ? asked[reuse % asked.length]! : nextTransferId(pool, this.pool(pool));
      if (asked.includes(transferId)) seen.repeatedId++;
      asked.push(transferId);
      return {
        transferId,
        amountMicro,
        from: { kind: 'wallet', userId: USER, walletContext: f.walletContext },
        to: { kind: 'pool', userId: USER, agentId, walletContext: f.walletContext, ...(f.follow ? { follow: f.follow } : {}) },
      };
    };
    const end = this.run(planned(planFor(f.amountMicro, f.reuse)), f);
    if (end) return;
    if (f.retryAmountMicro === null) return; // the recovery finishes it, before a later request or at the end
    // The retried request recomputes its plan: the pool's next id is the interrupted one while the
    // pool has not recorded it, so the debit is found, not made twice.
    seen.retriedDebit++;
    const retried = this.run(planned(planFor(f.retryAmountMicro, null)), { twice: f.twice, crashAfter: null });
    assert.ok(retried && isFinished(retried));
  }
}

/** Every request, then the recovery: the world once every transfer is finished. */
function settle(follows: Follow[]): World {
  const world = new World();
  for (const f of follows) world.request(f);
  world.recover();
  return world;
}

t.test('money is conserved at every step of random transfers: wallet + pools + in flight = the start, exactly', async (t) => {
  // The invariant is asserted inside every step (World.assertConserved); a counterexample fails here with its seed.
  fc.assert(fc.property(fc.array(followArb, { minLength: 1, maxLength: 15 }), (follows) => void settle(follows)), { numRuns: 300 });
  // The runs must have gone through every path the property claims to cover.
  for (const [path, count] of Object.entries(seen)) t.ok(count > 0, `the random runs went through: ${path} (${count})`);
});

t.test('once every transfer is finished, the wallet and the pools hold exactly the start and no balance is negative', async (t) => {
  fc.assert(
    fc.property(fc.array(followArb, { minLength: 1, maxLength: 15 }), (follows) => {
      const world = settle(follows);
      const { wallet, pools, inFlight } = world.audit();
      assert.equal(inFlight, 0, 'nothing is left on its way');
      assert.equal(wallet + pools, START, `wallet ${wallet} + pools ${pools} != start ${START}`);
      world.assertNoneNegative('at the end');
      // Every debit ended in exactly one place: credited to its pool, or back in the wallet.
      for (const plan of world.debits()) {
        const { to, transferId } = plan;
        const credited = world.pool(endpointKey(to).slice('pool:'.length)).transfers.get(transferId) === 'credited';
        assert.notEqual(credited, world.wallet.debits.get(transferId)!.refunded, `${transferId} is ${credited ? 'both credited and refunded' : 'neither credited nor refunded'}`);
      }
    }),
    { numRuns: 300 },
  );
  t.pass('300 random histories settled with the start conserved');
});
