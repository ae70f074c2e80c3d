// Money is conserved by fee claims: random fee settlements in an agent's pools and the developer's
// claims of a part or of everything, through the real `ClaimFees` command (commands/fees/claim.ts:
// the accrual from the pool streams, then the transfer on the real runner and steps) over the
// in-memory event log (claim-world.ts, test/support/memory-service.ts), with repeated claim ids,
// two processes claiming at once, a process dying mid-claim finished by a retry or by the recovery
// (the real ResumeTransfer, from the account's FeesClaimed events), steps sent twice, settlements
// landing while a claim runs and a slow process accruing stale totals. Every amount is integer
// micro-USD, compared exactly, on what the streams recorded.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import type { ClaimFeesData } from '../../../commands/fees/commands.ts';
import { MIN_CLAIM_MICRO } from '../../../domain/fees/decide.ts';
import { claimableOf, type FeeAccountState } from '../../../domain/fees/state.ts';
import type { DomainError } from '../../../domain/shared/errors.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { planned } from '../../../domain/transfer/process.ts';
import { balanceOf, walletStream } from '../../../domain/wallet/state.ts';
import type { EventData } from '../../../infra/eventstore/port.ts';
import { Crash } from '../../support/memory-service.ts';
import { AGENT, DEV, FEES, FOREIGN, POOLS, START, seen, World } from './claim-world.ts';

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
  | { kind: 'settleDuring'; pool: number; creatorMicro: number }
  /** a slow process read the pool streams and waits at its first append to the account; a pool settles and another claim runs through */
  | { kind: 'race'; pool: number; creatorMicro: number }
  /** the claiming process waits at its credit to the wallet while the recovery resumes the claim from its FeesClaimed */
  | { kind: 'recoveryRace' };

type Claim = {
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
};

/** A pool settles a fee (the creator's share its stream holds grows), a claim, or the recovery worker's sweep. */
type Op = { kind: 'settle'; pool: number; creatorMicro: number } | Claim | { kind: 'recover' };

const creatorMicro = fc.integer({ min: 1, max: 50_000_000 });
const pool = fc.nat({ max: POOLS.length - 1 });
const faultArb: fc.Arbitrary<Fault> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('dying' as const), dieAt: fc.integer({ min: 1, max: 3 }), applied: fc.boolean(), retry: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('parallel' as const), same: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('steps' as const), twice: fc.boolean(), crashAfter: fc.option(fc.integer({ min: 1, max: 2 })) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('settleDuring' as const), pool, creatorMicro }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('race' as const), pool, creatorMicro }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'recoveryRace' as const }) },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('settle' as const), pool, creatorMicro }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('claim' as const),
      amountMicro: fc.option(fc.oneof(fc.integer({ min: 1, max: 2 * MIN_CLAIM_MICRO }), fc.integer({ min: MIN_CLAIM_MICRO, max: 30_000_000 }))),
      pools: fc.oneof(fc.constant<number[]>([0, 1, 2]), fc.array(fc.nat({ max: POOLS.length }), { maxLength: 4 })),
      reuse: fc.option(fc.nat({ max: 5 }), { freq: 3 }),
      noKey: fc.boolean(),
      stranger: fc.nat({ max: 15 }).map((n) => n === 0),
      fault: faultArb,
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'recover' as const }) },
);

/** A claim through the real command, with what goes wrong around it. */
async function claim(w: World, op: Claim): Promise<void> {
  const reused = op.reuse !== null && w.moveIds.length > 0 ? w.moveIds[op.reuse % w.moveIds.length]! : null;
  const moveId = reused ?? (op.noKey ? null : w.freshMoveId());
  const poolIds = op.pools.map((i) => POOLS[i] ?? FOREIGN);
  if (!POOLS.every((p) => poolIds.includes(p))) seen.partialPools++;
  const data: ClaimFeesData = {
    agentId: AGENT,
    developerId: op.stranger ? 'dev-2' : DEV,
    poolIds,
    ...(op.amountMicro === null ? {} : { amountMicro: op.amountMicro }),
    ...(moveId ? { moveId } : {}),
  };
  const before = w.account();
  if (op.stranger) {
    const size = w.service.log.size;
    const answer = await w.answer(data);
    assert.ok('refused' in answer && answer.refused.reason === 'NOT_AGENT_OWNER', `a stranger's claim answered ${JSON.stringify(answer)}`);
    assert.equal(w.service.log.size, size, "a stranger's claim appended");
    seen.notOwner++;
    return;
  }
  const { fault } = op;
  switch (fault.kind) {
    case 'none':
      return w.expect(data, before, await w.answer(data));
    case 'settleDuring': {
      w.during = { pool: fault.pool, creatorMicro: fault.creatorMicro };
      const answer = await w.answer(data);
      if (w.during)
        w.settle(fault.pool, fault.creatorMicro); // the claim appended nothing to the account
      else if (poolIds.includes(POOLS[fault.pool]!)) seen.settledMidClaim++; // it accrued the pool's total as it read it, before this settlement
      w.during = null;
      return w.expect(data, before, answer);
    }
    case 'dying':
      return dying(w, data, before, fault);
    case 'parallel':
      return parallel(w, data, before, fault.same);
    case 'race':
      return race(w, data, before, fault);
    case 'recoveryRace':
      return recoveryRace(w, data, before);
    case 'steps':
      return steps(w, data, before, fault);
  }
}

/** The claiming process dies at an append; the client retries the same request at once, or the recovery finishes it later. */
async function dying(w: World, data: ClaimFeesData, before: FeeAccountState, fault: Extract<Fault, { kind: 'dying' }>): Promise<void> {
  try {
    return w.expect(data, before, await w.answer(data, w.service.dying(fault.dieAt, fault.applied)));
  } catch (err) {
    if (!(err instanceof Crash)) throw err;
    seen.crashed++;
  }
  w.check('after the crash');
  if (!fault.retry || !data.moveId) return;
  const transferId = `${FEES}#claim-${data.moveId}`;
  if (w.account().claims.get(transferId) && !w.wallet().credits.get(transferId)) seen.retried++;
  w.expect(data, before, await w.answer(data));
}

/** Two processes send the same request (a doubled delivery) or two claims at once. */
async function parallel(w: World, data: ClaimFeesData, before: FeeAccountState, same: boolean): Promise<void> {
  const other: ClaimFeesData = same ? data : { ...data, moveId: w.freshMoveId() };
  const answers = await Promise.all([w.answer(data, w.service.process()), w.answer(other, w.service.process())]);
  w.expectTogether(
    [
      [data, answers[0]],
      [other, answers[1]],
    ],
    before,
  );
  if (same && data.moveId) {
    seen.parallelSame++;
    const [a, b] = answers.map((x) => ('ok' in x ? { id: x.ok.transferId, claimed: x.ok.claimedMicro } : { refused: x.refused.reason }));
    assert.deepEqual(a, b, 'the same request sent twice at once answers the same');
  } else seen.parallelOther++;
}

/** A process whose first append to `stream` waits until `release`: `held` tells what it was about to append. */
function slowAt(w: World, stream: string) {
  const slow = { held: null as EventData[] | null, reached: () => {}, release: () => {} };
  const holding = new Promise<void>((resolve) => (slow.reached = resolve));
  const gate = new Promise<void>((resolve) => (slow.release = resolve));
  const dispatch = w.service.process(async (name, events) => {
    if (name !== stream || slow.held) return;
    slow.held = events;
    slow.reached();
    await gate;
  });
  return {
    ...slow,
    dispatch,
    holding,
    get events(): EventData[] {
      return slow.held ?? [];
    },
  };
}

/**
 * A slow process read the pool streams and waits at its first append to the account; meanwhile a
 * pool settles and another claim (of everything, every pool) runs through. The slow one then meets
 * a newer account: its accrual of older totals, or its debit, is decided again on it.
 */
async function race(w: World, data: ClaimFeesData, before: FeeAccountState, fault: Extract<Fault, { kind: 'race' }>): Promise<void> {
  const slow = slowAt(w, FEES);
  const first = w.answer(data, slow.dispatch);
  await Promise.race([slow.holding, first]);
  w.settle(fault.pool, fault.creatorMicro);
  const other: ClaimFeesData = { agentId: AGENT, developerId: DEV, poolIds: POOLS, moveId: w.freshMoveId() };
  const second = await w.answer(other);
  slow.release();
  w.expectTogether(
    [
      [data, await first],
      [other, second],
    ],
    before,
  );
  if (slow.events.some((e) => e.type === 'FeesAccrued' && (e.data as { poolId: string }).poolId === POOLS[fault.pool])) seen.staleAccrual++;
  else if (slow.events.some((e) => e.type === 'FeesClaimed')) seen.staleDebit++;
}

/** The claiming process waits at its credit to the wallet; the recovery worker resumes the claim meanwhile, from its FeesClaimed. */
async function recoveryRace(w: World, data: ClaimFeesData, before: FeeAccountState): Promise<void> {
  const slow = slowAt(w, walletStream(DEV));
  const first = w.answer(data, slow.dispatch);
  await Promise.race([slow.holding, first]);
  if (slow.events.length > 0) {
    seen.recoveryRace++;
    await w.recover();
  }
  slow.release();
  w.expect(data, before, await first);
}

/** The claim's transfer alone on the real runner, each step sent twice or the process stopping after some steps. */
async function steps(w: World, data: ClaimFeesData, before: FeeAccountState, fault: Extract<Fault, { kind: 'steps' }>): Promise<void> {
  const moveId = data.moveId ?? w.freshMoveId();
  const plan: TransferPlan = {
    transferId: `${FEES}#claim-${moveId}`,
    amountMicro: data.amountMicro ?? 0,
    from: { kind: 'fees', agentId: AGENT, developerId: DEV, ...(data.amountMicro === undefined ? { all: true as const } : {}) },
    to: { kind: 'wallet', userId: DEV, walletContext: 'real' },
  };
  if (fault.twice) seen.twice++;
  const end = await w.service.run(planned(plan), fault, (step) => w.check(`${step} ${plan.transferId}`));
  if (!end) {
    seen.crashed++;
    return;
  }
  if (end.status === 'failed') return w.expect(data, before, { refused: end.refusal as DomainError });
  const account = w.account();
  const ok = {
    agentId: AGENT,
    transferId: plan.transferId,
    status: end.status,
    claimedMicro: end.plan.amountMicro,
    earnedMicro: account.earnedMicro,
    claimedTotalMicro: account.claimedMicro,
    claimableMicro: claimableOf(account),
  };
  w.expect({ ...data, moveId }, before, { ok });
}

async function apply(w: World, op: Op): Promise<void> {
  if (op.kind === 'settle') w.settle(op.pool, op.creatorMicro);
  else if (op.kind === 'claim') await claim(w, op);
  else await w.recover();
  w.check(`after ${op.kind}`);
}

/** Every operation, then the recovery: the world once every claim is finished. */
async function play(ops: Op[]): Promise<World> {
  const world = new World();
  for (const op of ops) await apply(world, op);
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
  const final: Claim = { kind: 'claim', amountMicro: null, pools: [0, 1, 2], reuse: null, noKey: true, stranger: false, fault: { kind: 'none' } };
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
