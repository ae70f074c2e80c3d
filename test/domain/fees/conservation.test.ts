// Money is conserved by fee claims: random fee settlements in an agent's pools, accruals of their
// totals into the agent's fee account (repeated, stale, out of order), and claims of a part or of
// everything, run through the transfer process with the fee account's and the wallet's deciders
// (pure: events folded into states), with refused debits, repeated transfer ids, steps delivered
// twice and crashes finished by the recovery. Every amount is integer micro-USD, compared exactly.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { feeAccountDecider, MIN_CLAIM_MICRO } from '../../../domain/fees/decide.ts';
import type { FeeEvent } from '../../../domain/fees/events.ts';
import { claimableOf, type FeeAccountState } from '../../../domain/fees/state.ts';
import { DomainError } from '../../../domain/shared/errors.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { decide, evolve, isFinished, planned, resumed, type TransferOutcome, type TransferState, type TransferStep } from '../../../domain/transfer/process.ts';
import { walletDecider } from '../../../domain/wallet/decide.ts';
import { balanceOf, type WalletState } from '../../../domain/wallet/state.ts';
import { at } from '../../support/given-when-then.ts';

const AGENT = 'agent-1';
const DEV = 'dev-1';
const POOLS = ['u1.agent-1.real', 'u2.agent-1.real', 'u3.agent-1.real'];
const START = 10_000_000_000; // the virtual start; the real context, where claims go, starts at 0
const metadata = at('2025-01-02T03:04:05.000Z');

type Op =
  /** a pool settles a fee: the creator's share its stream holds grows */
  | { kind: 'settle'; pool: number; creatorMicro: number }
  /** the account accrues the totals the pool streams held after the settlement `asOf` (a stale read), or now */
  | { kind: 'accrue'; asOf: number | null }
  /** a claim of a part (or everything), and what goes wrong around it */
  | { kind: 'claim'; amountMicro: number | null; reuse: number | null; twice: boolean; crashAfter: number | null }
  | { kind: 'recover' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('settle' as const), pool: fc.nat({ max: POOLS.length - 1 }), creatorMicro: fc.integer({ min: 1, max: 50_000_000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('accrue' as const), asOf: fc.option(fc.nat({ max: 30 })) }) },
  { weight: 3, arbitrary: fc.record({
    kind: fc.constant('claim' as const),
    amountMicro: fc.option(fc.oneof(fc.integer({ min: 1, max: 2 * MIN_CLAIM_MICRO }), fc.integer({ min: MIN_CLAIM_MICRO, max: 30_000_000 }))),
    reuse: fc.option(fc.nat({ max: 5 }), { freq: 3 }),
    twice: fc.boolean(),
    crashAfter: fc.option(fc.integer({ min: 1, max: 2 }), { freq: 3 }),
  }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'recover' as const }) },
);

/** What the random runs went through, so that a generator that stops reaching a path fails the test. */
const seen = { paid: 0, all: 0, refused: 0, crashed: 0, recovered: 0, repeatedId: 0, twice: 0, staleAccrual: 0 };

/** The pool streams' fee totals, the fee account, the developer's wallet: the streams a claim touches. */
class World {
  /** each pool's creator fees as its stream holds them, after each settlement (index 0: none) */
  readonly totals: number[][] = [POOLS.map(() => 0)];
  account: FeeAccountState = feeAccountDecider.initialState();
  readonly accountEvents: FeeEvent[] = [];
  wallet: WalletState = walletDecider.initialState();
  readonly ids: string[] = [];
  private n = 0;

  get earnedNow(): number[] {
    return this.totals[this.totals.length - 1]!;
  }

  /** A step as commands/transfers/steps.ts runs it: the command, then the fact its endpoint holds. */
  perform(step: TransferStep): { outcome: TransferOutcome; appended: number } {
    switch (step.type) {
      case 'DebitFees': {
        const { transfer } = step.data;
        let events: FeeEvent[];
        try {
          events = feeAccountDecider.decide({ type: 'DebitFees', data: { transfer }, metadata }, this.account);
        } catch (err) {
          if (err instanceof DomainError) return { outcome: { type: 'DebitRefused', error: err }, appended: 0 };
          throw err;
        }
        this.appendAccount(events);
        return { outcome: { type: 'Debited', amountMicro: this.account.claims.get(transfer.transferId)!.amountMicro }, appended: events.length };
      }
      case 'CreditWallet': {
        const { transferId, amountMicro, to } = step.data.transfer;
        assert.ok(to.kind === 'wallet');
        const data = { transferId, walletContext: to.walletContext, amountMicro, from: `fees:${AGENT}`, virtualStartMicro: START };
        const events = walletDecider.decide({ type: 'CreditWallet', data, metadata }, this.wallet);
        this.wallet = events.reduce(walletDecider.evolve, this.wallet);
        return { outcome: { type: 'Credited' }, appended: events.length };
      }
      default:
        throw new Error(`${step.type}: a fee claim has no such step`);
    }
  }

  private appendAccount(events: FeeEvent[]): void {
    this.accountEvents.push(...events);
    this.account = events.reduce(feeAccountDecider.evolve, this.account);
  }

  /** Claims the account recorded and the wallet has not taken yet: money on its way. */
  inFlight(): TransferPlan[] {
    return this.accountEvents.flatMap((e) => (e.type === 'FeesClaimed' && !this.wallet.credits.get(e.data.transfer.transferId) ? [e.data.transfer] : []));
  }

  /** After every step: accrued = claimable + paid + on its way; nothing negative; no pool claimed beyond what it earned. */
  assertConserved(context: string): void {
    const claimable = claimableOf(this.account);
    const paid = balanceOf(this.wallet, 'real', START);
    const inFlight = this.inFlight().reduce((sum, plan) => sum + plan.amountMicro, 0);
    for (const n of [claimable, paid, inFlight]) assert.ok(Number.isSafeInteger(n) && n >= 0, `${context}: ${n} is not an exact non-negative integer`);
    assert.equal(claimable + paid + inFlight, this.account.earnedMicro, `${context}: claimable ${claimable} + paid ${paid} + in flight ${inFlight} != accrued ${this.account.earnedMicro}`);
    POOLS.forEach((id, i) => {
      const pool = this.account.pools.get(id) ?? { earnedMicro: 0, claimedMicro: 0 };
      assert.ok(pool.claimedMicro <= pool.earnedMicro, `${context}: pool ${id} claimed ${pool.claimedMicro} of ${pool.earnedMicro}`);
      assert.ok(pool.earnedMicro <= this.earnedNow[i]!, `${context}: pool ${id} accrued ${pool.earnedMicro}, its stream settled ${this.earnedNow[i]}`);
    });
  }

  run(start: TransferState, opts: { twice: boolean; crashAfter: number | null }): TransferState | null {
    let state = start;
    let steps = 0;
    for (let step = decide(state); step; step = decide(state)) {
      const { outcome } = this.perform(step);
      this.assertConserved(`${step.type} ${start.plan.transferId}`);
      if (opts.twice) {
        const again = this.perform(step);
        seen.twice++;
        assert.equal(again.appended, 0, `${step.type} delivered twice appended again`);
        assert.equal(again.outcome.type, outcome.type, `${step.type} delivered twice reported another fact`);
        this.assertConserved(`${step.type} again`);
      }
      if (opts.crashAfter === ++steps) {
        seen.crashed++;
        return null;
      }
      if (outcome.type === 'DebitRefused') seen.refused++;
      state = evolve(state, outcome);
    }
    return state;
  }

  /** The recovery worker: every claim not credited yet is resumed from its debit event. */
  recover(): void {
    for (const plan of this.inFlight()) {
      seen.recovered++;
      const end = this.run(resumed(plan), { twice: false, crashAfter: null });
      assert.ok(end && isFinished(end), `the recovery left ${plan.transferId} unfinished`);
    }
  }

  apply(op: Op): void {
    switch (op.kind) {
      case 'settle': {
        const next = [...this.earnedNow];
        next[op.pool]! += op.creatorMicro;
        this.totals.push(next);
        return;
      }
      case 'accrue': {
        const asOf = op.asOf === null ? this.totals.length - 1 : Math.min(op.asOf, this.totals.length - 1);
        if (asOf < this.totals.length - 1) seen.staleAccrual++;
        const earned = POOLS.map((poolId, i) => ({ poolId, earnedMicro: this.totals[asOf]![i]! }));
        this.appendAccount(feeAccountDecider.decide({ type: 'AccrueFees', data: { earned }, metadata }, this.account));
        return;
      }
      case 'claim':
        return this.claim(op);
      case 'recover':
        return this.recover();
    }
  }

  private claim(op: Extract<Op, { kind: 'claim' }>): void {
    const reused = op.reuse !== null && this.ids.length > 0 ? this.ids[op.reuse % this.ids.length]! : null;
    if (reused) seen.repeatedId++;
    const transferId = reused ?? `fees-${AGENT}#claim-${++this.n}`;
    this.ids.push(transferId);
    if (op.amountMicro === null) seen.all++;
    const before = claimableOf(this.account);
    const end = this.run(
      planned({
        transferId,
        amountMicro: op.amountMicro ?? 0,
        from: { kind: 'fees', agentId: AGENT, developerId: DEV, ...(op.amountMicro === null ? { all: true as const } : {}) },
        to: { kind: 'wallet', userId: DEV, walletContext: 'real' },
      }),
      op,
    );
    if (end?.status === 'completed' && !reused) {
      seen.paid++;
      assert.equal(claimableOf(this.account), before - end.plan.amountMicro, 'a claim takes what it pays from the claimable fees');
    }
  }
}

/** Every operation, then the recovery: the world once every claim is finished. */
function settle(ops: Op[]): World {
  const world = new World();
  for (const op of ops) world.apply(op);
  world.recover();
  return world;
}

t.test('fee claims conserve money at every step: accrued = claimable + paid + in flight, exactly', async (t) => {
  // The invariant is asserted inside every step (World.assertConserved); a counterexample fails here with its seed.
  fc.assert(fc.property(fc.array(opArb, { minLength: 5, maxLength: 30 }), (ops) => void settle(ops)), { numRuns: 300 });
  for (const [path, count] of Object.entries(seen)) t.ok(count > 0, `the random runs went through: ${path} (${count})`);
});

t.test('once every claim is finished: the account and the wallet hold what the pools settled, each claim paid once', async (t) => {
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 5, maxLength: 30 }), (ops) => {
      const world = settle([...ops, { kind: 'accrue', asOf: null }]);
      assert.equal(world.inFlight().length, 0, 'nothing is left on its way');
      const settled = world.earnedNow.reduce((a, b) => a + b, 0);
      assert.equal(world.account.earnedMicro, settled, 'the account accrued every fee the pools settled, once');
      assert.equal(claimableOf(world.account) + balanceOf(world.wallet, 'real', START), settled, 'fee account + developer wallet = the fees settled');
      const claims = world.accountEvents.flatMap((e) => (e.type === 'FeesClaimed' ? [e.data] : []));
      for (const claim of claims) {
        assert.equal(world.wallet.credits.get(claim.transfer.transferId)?.amountMicro, claim.transfer.amountMicro, `${claim.transfer.transferId} paid what it took`);
        assert.equal(claim.parts.reduce((sum, p) => sum + p.amountMicro, 0), claim.transfer.amountMicro, 'its parts add up to the claim');
        assert.ok(claim.transfer.amountMicro >= MIN_CLAIM_MICRO, 'no claim below the minimum');
      }
      assert.equal(new Set(claims.map((c) => c.transfer.transferId)).size, claims.length, 'no claim recorded twice');
    }),
    { numRuns: 300 },
  );
  t.pass('300 random histories settled with the fees conserved');
});
