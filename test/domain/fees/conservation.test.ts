// Money is conserved by fee claims: random fee settlements in an agent's pools and the developer's
// claims of a part or of everything, through the real `ClaimFees` command (commands/fees/claim.ts:
// the accrual from the pool streams, then the transfer on the real runner and steps) over the
// in-memory event log (test/support/memory-service.ts), with repeated claim ids, two processes
// claiming at once, a process dying mid-claim finished by a retry or by the recovery (the real
// ResumeTransfer, from the account's FeesClaimed events), steps sent twice, and settlements landing
// while a claim runs. Every amount is integer micro-USD, compared exactly, on what the streams recorded.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import type { Dispatch } from '../../../commands/dispatch.ts';
import type { ClaimFeesData, ClaimFeesResult } from '../../../commands/fees/commands.ts';
import { agentStream } from '../../../domain/agent/state.ts';
import { feeAccountDecider, MIN_CLAIM_MICRO } from '../../../domain/fees/decide.ts';
import type { FeeEvent, FeesClaimed } from '../../../domain/fees/events.ts';
import { claimableOf, feeAccountStream } from '../../../domain/fees/state.ts';
import { poolStream } from '../../../domain/pool/state.ts';
import { DomainError } from '../../../domain/shared/errors.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { planned } from '../../../domain/transfer/process.ts';
import { walletDecider } from '../../../domain/wallet/decide.ts';
import { balanceOf, walletStream } from '../../../domain/wallet/state.ts';
import { Crash, MemoryService } from '../../support/memory-service.ts';

const AGENT = 'agent-1';
const DEV = 'dev-1';
const POOLS = ['u1.agent-1.real', 'u2.agent-1.real', 'u3.agent-1.real'];
/** another agent's pool: a claim named with it must ignore it */
const FOREIGN = 'u1.agent-2.real';
const FEES = feeAccountStream(AGENT);
const START = 10_000_000_000; // the virtual start; the real context, where claims go, starts at 0
const NOW = new Date('2025-01-02T03:04:05.000Z');

/** What goes wrong around a claim. */
type Fault =
  | { kind: 'none' }
  /** the claiming process dies at its n-th append (after it, its answer lost, when `applied`); the client retries at once, or not */
  | { kind: 'dying'; dieAt: number; applied: boolean; retry: boolean }
  /** two processes send it at once: the same request (a doubled delivery) or another claim */
  | { kind: 'parallel'; same: boolean }
  /** the claim's transfer alone on the real runner (no accrual), each step sent twice, or the process stopping after n steps */
  | { kind: 'steps'; twice: boolean; crashAfter: number | null }
  /** a pool settles a fee while the claim runs: after it read the pool streams, at its first append to the account */
  | { kind: 'settleDuring'; pool: number; creatorMicro: number };

type Op =
  /** a pool settles a fee: the creator's share its stream holds grows */
  | { kind: 'settle'; pool: number; creatorMicro: number }
  | {
      kind: 'claim';
      amountMicro: number | null;
      /** the pools the request names, in its order (POOLS.length: another agent's pool) */
      pools: number[];
      /** reuse an earlier claim's moveId; else a fresh one, or none (a fresh uuid) */
      reuse: number | null;
      noKey: boolean;
      /** sent by someone who is not the agent's developer */
      stranger: boolean;
      fault: Fault;
    }
  | { kind: 'recover' };

const creatorMicro = fc.integer({ min: 1, max: 50_000_000 });
const faultArb: fc.Arbitrary<Fault> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('dying' as const), dieAt: fc.integer({ min: 1, max: 3 }), applied: fc.boolean(), retry: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('parallel' as const), same: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('steps' as const), twice: fc.boolean(), crashAfter: fc.option(fc.integer({ min: 1, max: 2 })) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('settleDuring' as const), pool: fc.nat({ max: POOLS.length - 1 }), creatorMicro }) },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('settle' as const), pool: fc.nat({ max: POOLS.length - 1 }), creatorMicro }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('claim' as const),
      amountMicro: fc.option(fc.oneof(fc.integer({ min: 1, max: 2 * MIN_CLAIM_MICRO }), fc.integer({ min: MIN_CLAIM_MICRO, max: 30_000_000 }))),
      pools: fc.oneof(fc.constant<number[]>([0, 1, 2]), fc.array(fc.nat({ max: POOLS.length }), { minLength: 1, maxLength: 4 })),
      reuse: fc.option(fc.nat({ max: 5 }), { freq: 3 }),
      noKey: fc.boolean(),
      stranger: fc.nat({ max: 15 }).map((n) => n === 0),
      fault: faultArb,
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'recover' as const }) },
);

/** What the random runs went through, so that a generator that stops reaching a path fails the test. */
const seen = {
  paid: 0,
  all: 0,
  refused: 0,
  notOwner: 0,
  crashed: 0,
  retried: 0,
  recovered: 0,
  finishedResumedAgain: 0,
  repeatedId: 0,
  parallelSame: 0,
  parallelOther: 0,
  twice: 0,
  staleAccrual: 0,
  partialPools: 0,
};

type Answer = { ok: ClaimFeesResult } | { refused: DomainError };

const agentListed = {
  type: 'AgentListed',
  data: {
    agentId: AGENT,
    developerId: DEV,
    name: 'Fee Earner',
    tags: [],
    monthlyPriceMicroUsd: 0,
    successFeePercent: 20,
    connectedChannels: [],
    membershipGated: false,
    venue: 'SPOT_VENUE',
    minAllocationMicroUsd: 1_000_000,
    minTradeMicroUsd: 0,
    minPerTradePercent: 0,
    recommendedPerTradePercent: 10,
    maxConcurrentPositions: 4,
    maxEntriesPerTrade: 3,
    signingSecretCiphertext: 'v1.x.y.z',
    listedAt: NOW.toISOString(),
  },
};

/** The agent, its pool streams, its fee account and the developer's wallet, on the real command code. */
class World {
  readonly service = new MemoryService({ virtualStartMicro: START, now: NOW });
  readonly moveIds: string[] = [];
  /** an assertion that failed inside an append (the command's error may hide it) */
  failure: unknown = null;
  /** a settlement to land at the next append to the fee account */
  private during: { pool: number; creatorMicro: number } | null = null;
  private n = 0;

  constructor() {
    this.service.given(agentStream(AGENT), [agentListed]);
    this.service.onAppend = (stream) => {
      if (stream !== FEES && stream !== walletStream(DEV)) return;
      try {
        this.assertConserved(`append to ${stream}`);
      } catch (err) {
        this.failure ??= err;
        throw err;
      }
      if (stream === FEES && this.during) {
        const { pool, creatorMicro } = this.during;
        this.during = null;
        this.settle(pool, creatorMicro);
      }
    };
  }

  account() {
    return this.service.state(feeAccountDecider, AGENT);
  }

  wallet() {
    return this.service.state(walletDecider, DEV);
  }

  /** The creator's fees a pool's stream holds. */
  settledOf(pool: string): number {
    return this.service.log
      .read(poolStream(pool))
      .reduce((sum, e) => sum + (e.type === 'FeesSettled' ? (e.data as { creatorMicro: number }).creatorMicro : 0), 0);
  }

  /** The pool settles a fee (the pool's own process appends it: a fact this test starts from). */
  settle(pool: number, creator: number): void {
    const platformMicro = Math.floor(creator / 4);
    const data = {
      settlementId: `settle-${++this.n}`,
      feeMicro: creator + platformMicro,
      platformMicro,
      creatorMicro: creator,
      realizedMicro: 5 * (creator + platformMicro),
      unrealizedMicro: 0,
      feesChargedBeforeMicro: 0,
      successFeePercent: 20,
      at: NOW.toISOString(),
    };
    this.service.log.append(
      poolStream(POOLS[pool]!),
      [{ type: 'FeesSettled', data, metadata: { correlationId: 'settle', actor: 'test', occurredAt: data.at } }],
      'any',
    );
  }

  /** The claims the account recorded, from its own events (as the recovery reads them). */
  claims(): FeesClaimed[] {
    return this.service.events<FeeEvent>(feeAccountDecider, AGENT).flatMap((e) => (e.type === 'FeesClaimed' ? [e.data] : []));
  }

  /** Claims the account recorded and the wallet has not taken yet: money on its way. */
  inFlight(): TransferPlan[] {
    const { credits } = this.wallet();
    return this.claims().flatMap((c) => (credits.get(c.transfer.transferId) ? [] : [c.transfer]));
  }

  /** After every append: accrued = claimable + paid + on its way; nothing negative; no pool claimed beyond what it earned. */
  assertConserved(context: string): void {
    const account = this.account();
    const claimable = claimableOf(account);
    const paid = balanceOf(this.wallet(), 'real', START);
    const inFlight = this.inFlight().reduce((sum, plan) => sum + plan.amountMicro, 0);
    for (const n of [claimable, paid, inFlight]) assert.ok(Number.isSafeInteger(n) && n >= 0, `${context}: ${n} is not an exact non-negative integer`);
    assert.equal(
      claimable + paid + inFlight,
      account.earnedMicro,
      `${context}: claimable ${claimable} + paid ${paid} + in flight ${inFlight} != accrued ${account.earnedMicro}`,
    );
    for (const id of POOLS) {
      const pool = account.pools.get(id) ?? { earnedMicro: 0, claimedMicro: 0 };
      assert.ok(pool.claimedMicro <= pool.earnedMicro, `${context}: pool ${id} claimed ${pool.claimedMicro} of ${pool.earnedMicro}`);
      assert.ok(pool.earnedMicro <= this.settledOf(id), `${context}: pool ${id} accrued ${pool.earnedMicro}, its stream settled ${this.settledOf(id)}`);
    }
    assert.equal(account.pools.get(FOREIGN), undefined, `${context}: another agent's pool accrued`);
  }

  check(context: string): void {
    if (this.failure) throw this.failure;
    this.assertConserved(context);
  }

  /** A public command's answer, or the refusal it answered with; anything else (a crash included) is thrown. */
  async answer(data: ClaimFeesData, dispatch: Dispatch = this.service.dispatch): Promise<Answer> {
    try {
      return { ok: await this.service.send('ClaimFees', data, dispatch) };
    } catch (err) {
      if (err instanceof DomainError) return { refused: err };
      throw err;
    }
  }

  /** The recovery worker: every claim the account recorded is resumed from its FeesClaimed event. */
  async recover(): Promise<void> {
    for (const { transfer } of this.claims()) {
      const credited = this.wallet().credits.get(transfer.transferId) !== undefined;
      const before = this.service.log.size;
      const { status } = await this.service.send('ResumeTransfer', { transferId: transfer.transferId, sourceStream: FEES });
      assert.equal(status, 'completed', `the recovery left ${transfer.transferId} ${status}`);
      if (credited) {
        seen.finishedResumedAgain++;
        assert.equal(this.service.log.size, before, `${transfer.transferId}: resuming a paid claim appended`);
      } else seen.recovered++;
      this.check(`recovery of ${transfer.transferId}`);
    }
  }

  /** A claim through the real command, with what goes wrong around it. */
  async claim(op: Extract<Op, { kind: 'claim' }>): Promise<void> {
    const reused = op.reuse !== null && this.moveIds.length > 0 ? this.moveIds[op.reuse % this.moveIds.length]! : null;
    const moveId = reused ?? (op.noKey ? null : `m${++this.n}`);
    if (moveId) this.moveIds.push(moveId);
    const poolIds = op.pools.map((i) => POOLS[i] ?? FOREIGN);
    if (!POOLS.every((p) => poolIds.includes(p))) seen.partialPools++;
    const data: ClaimFeesData = {
      agentId: AGENT,
      developerId: op.stranger ? 'dev-2' : DEV,
      poolIds,
      ...(op.amountMicro === null ? {} : { amountMicro: op.amountMicro }),
      ...(moveId ? { moveId } : {}),
    };
    const before = { account: this.account(), size: this.service.log.size };
    if (op.stranger) {
      const answer = await this.answer(data);
      assert.ok('refused' in answer && answer.refused.reason === 'NOT_AGENT_OWNER', `a stranger's claim answered ${JSON.stringify(answer)}`);
      assert.equal(this.service.log.size, before.size, "a stranger's claim appended");
      seen.notOwner++;
      return;
    }
    const { fault } = op;
    switch (fault.kind) {
      case 'none':
        return this.expect(data, before.account, await this.answer(data));
      case 'settleDuring': {
        this.during = { pool: fault.pool, creatorMicro: fault.creatorMicro };
        const answer = await this.answer(data);
        if (this.during)
          this.settle(fault.pool, fault.creatorMicro); // the claim appended nothing to the account
        else if (poolIds.includes(POOLS[fault.pool]!)) seen.staleAccrual++; // it accrued the pool's total as it read it, before this settlement
        this.during = null;
        return this.expect(data, before.account, answer);
      }
      case 'dying':
        return this.dying(data, before.account, fault);
      case 'parallel':
        return this.parallel(data, before.account, fault.same);
      case 'steps':
        return this.steps(data, before.account, fault);
    }
  }

  /** A claim sent alone (nothing else ran since `before`): paid exactly what it answers, or refused for the rule it breaks. */
  private expect(data: ClaimFeesData, before: ReturnType<World['account']>, answer: Answer): void {
    const account = this.account();
    if ('refused' in answer) {
      const { reason } = answer.refused;
      const claimable = claimableOf(account);
      const amount = data.amountMicro;
      assert.ok(
        amount === undefined
          ? reason === 'EXCEEDS_CLAIMABLE' && claimable < MIN_CLAIM_MICRO
          : (reason === 'VALIDATION_FAILED' && amount < MIN_CLAIM_MICRO) || (reason === 'EXCEEDS_CLAIMABLE' && amount > claimable),
        `claim of ${amount ?? 'everything'} refused ${reason} with ${claimable} claimable`,
      );
      assert.equal(account.claimedMicro, before.claimedMicro, 'a refused claim took something');
      seen.refused++;
      return;
    }
    const { ok } = answer;
    this.expectPaid(data, ok);
    const recorded = before.claims.get(ok.transferId);
    assert.equal(ok.claimableMicro, claimableOf(account), 'the answer tells the account after the claim');
    if (recorded) {
      seen.repeatedId++;
      assert.equal(ok.claimedMicro, recorded.amountMicro, `${ok.transferId}: a repeat answers what the first claim took`);
      assert.equal(account.claimedMicro, before.claimedMicro, `${ok.transferId}: a repeat took something again`);
      return;
    }
    seen.paid++;
    assert.equal(account.claimedMicro - before.claimedMicro, ok.claimedMicro, 'a claim takes what it pays from the claimable fees');
    if (data.amountMicro === undefined) {
      seen.all++;
      assert.equal(ok.claimableMicro, 0, 'a claim of everything leaves nothing claimable');
    } else assert.equal(ok.claimedMicro, data.amountMicro, 'a claim of an amount pays that amount');
  }

  /** A claim answered: its transfer completed, the account and the wallet recorded the amount it answers. */
  private expectPaid(data: ClaimFeesData, ok: ClaimFeesResult): void {
    assert.equal(ok.status, 'completed', `${ok.transferId} answered ${ok.status}`);
    if (data.moveId) assert.equal(ok.transferId, `${FEES}#claim-${data.moveId}`, 'the claim id comes from its moveId');
    assert.ok(ok.claimedMicro >= MIN_CLAIM_MICRO, `${ok.transferId} paid ${ok.claimedMicro}, below the minimum`);
    assert.equal(this.account().claims.get(ok.transferId)?.amountMicro, ok.claimedMicro, `${ok.transferId}: the account recorded another amount`);
    assert.equal(this.wallet().credits.get(ok.transferId)?.amountMicro, ok.claimedMicro, `${ok.transferId}: the wallet was credited another amount`);
  }

  /** The claiming process dies at an append; the client retries the same request at once, or the recovery finishes it later. */
  private async dying(data: ClaimFeesData, before: ReturnType<World['account']>, fault: Extract<Fault, { kind: 'dying' }>): Promise<void> {
    try {
      return this.expect(data, before, await this.answer(data, this.service.dying(fault.dieAt, fault.applied)));
    } catch (err) {
      if (!(err instanceof Crash)) throw err;
      seen.crashed++;
    }
    this.check('after the crash');
    if (!fault.retry || !data.moveId) return;
    const transferId = `${FEES}#claim-${data.moveId}`;
    if (this.account().claims.get(transferId) && !this.wallet().credits.get(transferId)) seen.retried++;
    this.expect(data, before, await this.answer(data));
  }

  /** Two processes send the same request (a doubled delivery) or two claims at once. */
  private async parallel(data: ClaimFeesData, before: ReturnType<World['account']>, same: boolean): Promise<void> {
    const other: ClaimFeesData = same ? data : { ...data, moveId: `m${++this.n}` };
    if (!same) this.moveIds.push(other.moveId!);
    const answers = await Promise.all([this.answer(data, this.service.process()), this.answer(other, this.service.process())]);
    this.check('after two claims at once');
    const paid = answers.flatMap((a) => ('ok' in a ? [a.ok] : []));
    for (const [i, a] of answers.entries()) if ('ok' in a) this.expectPaid(i === 0 ? data : other, a.ok);
    const fresh = new Set(paid.filter((ok) => !before.claims.get(ok.transferId)).map((ok) => ok.transferId));
    const taken = [...fresh].reduce((sum, id) => sum + this.account().claims.get(id)!.amountMicro, 0);
    assert.equal(this.account().claimedMicro - before.claimedMicro, taken, 'two claims at once took what they answered, once each');
    if (same && data.moveId) {
      seen.parallelSame++;
      const [a, b] = answers.map((x) => ('ok' in x ? { id: x.ok.transferId, claimed: x.ok.claimedMicro } : { refused: x.refused.reason }));
      assert.deepEqual(a, b, 'the same request sent twice at once answers the same');
    } else seen.parallelOther++;
  }

  /** The claim's transfer alone on the real runner, each step sent twice or the process stopping after some steps. */
  private async steps(data: ClaimFeesData, before: ReturnType<World['account']>, fault: Extract<Fault, { kind: 'steps' }>): Promise<void> {
    const plan: TransferPlan = {
      transferId: `${FEES}#claim-${data.moveId ?? `m${++this.n}`}`,
      amountMicro: data.amountMicro ?? 0,
      from: { kind: 'fees', agentId: AGENT, developerId: DEV, ...(data.amountMicro === undefined ? { all: true as const } : {}) },
      to: { kind: 'wallet', userId: DEV, walletContext: 'real' },
    };
    if (fault.twice) seen.twice++;
    const end = await this.service.run(planned(plan), fault, (step) => this.check(`${step} ${plan.transferId}`));
    if (!end) {
      seen.crashed++;
      return;
    }
    if (end.status === 'failed') {
      this.expect(data, before, { refused: end.refusal as DomainError });
      return;
    }
    const account = this.account();
    const ok = {
      agentId: AGENT,
      transferId: plan.transferId,
      status: end.status,
      claimedMicro: end.plan.amountMicro,
      earnedMicro: account.earnedMicro,
      claimedTotalMicro: account.claimedMicro,
      claimableMicro: claimableOf(account),
    };
    this.expect({ ...data, moveId: plan.transferId.slice(`${FEES}#claim-`.length) }, before, { ok });
  }

  async apply(op: Op): Promise<void> {
    if (op.kind === 'settle') this.settle(op.pool, op.creatorMicro);
    else if (op.kind === 'claim') await this.claim(op);
    else await this.recover();
    this.check(`after ${op.kind}`);
  }
}

/** Every operation, then the recovery: the world once every claim is finished. */
async function play(ops: Op[]): Promise<World> {
  const world = new World();
  for (const op of ops) await world.apply(op);
  await world.recover();
  return world;
}

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);
const history = fc.array(opArb, { minLength: 5, maxLength: 30 });

t.test('fee claims conserve money at every append: accrued = claimable + paid + in flight, exactly', async (t) => {
  // The invariant is asserted after every append to the account or the wallet (World.assertConserved); a counterexample fails here with its seed.
  const started = Date.now();
  await fc.assert(
    fc.asyncProperty(history, async (ops) => void (await play(ops))),
    { numRuns: RUNS },
  );
  t.comment(`${RUNS} histories in ${Date.now() - started} ms`);
  for (const [path, count] of Object.entries(seen)) t.ok(count > 0, `the random runs went through: ${path} (${count})`);
});

t.test('once every claim is finished: the account and the wallet hold what the pools settled, each claim paid once', async (t) => {
  const final: Op = { kind: 'claim', amountMicro: null, pools: [0, 1, 2], reuse: null, noKey: true, stranger: false, fault: { kind: 'none' } };
  await fc.assert(
    fc.asyncProperty(history, async (ops) => {
      // the last claim (of everything, refused when nothing is left) accrues every pool's fees as the streams hold them
      const world = await play([...ops, final]);
      assert.equal(world.inFlight().length, 0, 'nothing is left on its way');
      const account = world.account();
      const wallet = world.wallet();
      const settled = POOLS.reduce((sum, id) => sum + world.settledOf(id), 0);
      assert.equal(account.earnedMicro, settled, 'the account accrued every fee the pools settled, once');
      assert.equal(claimableOf(account) + balanceOf(wallet, 'real', START), settled, 'fee account + developer wallet = the fees settled');
      const claims = world.claims();
      for (const claim of claims) {
        const { transferId, amountMicro } = claim.transfer;
        assert.deepEqual(
          wallet.credits.get(transferId),
          { walletContext: 'real', amountMicro, from: `fees:${AGENT}` },
          `${transferId} paid what it took, from the account`,
        );
        assert.equal(
          claim.parts.reduce((sum, p) => sum + p.amountMicro, 0),
          amountMicro,
          'its parts add up to the claim',
        );
        assert.ok(amountMicro >= MIN_CLAIM_MICRO, 'no claim below the minimum');
      }
      assert.equal(new Set(claims.map((c) => c.transfer.transferId)).size, claims.length, 'no claim recorded twice');
      assert.equal(wallet.credits.size, claims.length, 'the wallet took nothing but the claims');
      for (const id of POOLS) {
        const parts = claims.flatMap((c) => c.parts).filter((p) => p.poolId === id);
        assert.equal(
          account.pools.get(id)?.claimedMicro ?? 0,
          parts.reduce((sum, p) => sum + p.amountMicro, 0),
          `${id}: claimed = its parts`,
        );
      }
    }),
    { numRuns: RUNS },
  );
  t.pass(`${RUNS} random histories settled with the fees conserved`);
});
