// The world of the fee claim property (conservation.test.ts): an agent listed by its developer,
// its real pool streams holding FeesSettled facts, its fee account and the developer's wallet, all
// on the real command code over the in-memory log (test/support/memory-service.ts). The checks
// read what the streams recorded: the account and the wallet folded by their own deciders.
import assert from 'node:assert/strict';
import type { Dispatch } from '../../../commands/dispatch.ts';
import type { ClaimFeesData, ClaimFeesResult } from '../../../commands/fees/commands.ts';
import { agentStream } from '../../../domain/agent/state.ts';
import { feeAccountDecider, MIN_CLAIM_MICRO } from '../../../domain/fees/decide.ts';
import type { FeeEvent, FeesClaimed } from '../../../domain/fees/events.ts';
import { claimableOf, feeAccountStream, type FeeAccountState } from '../../../domain/fees/state.ts';
import { poolStream } from '../../../domain/pool/state.ts';
import { DomainError } from '../../../domain/shared/errors.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { walletDecider } from '../../../domain/wallet/decide.ts';
import { balanceOf, walletStream } from '../../../domain/wallet/state.ts';
import { MemoryService } from '../../support/memory-service.ts';

export const AGENT = 'agent-1';
export const DEV = 'dev-1';
export const POOLS = ['u1.agent-1.real', 'u2.agent-1.real', 'u3.agent-1.real'];
/** another agent's pool: a claim named with it must ignore it */
export const FOREIGN = 'u1.agent-2.real';
export const FEES = feeAccountStream(AGENT);
export const START = 10_000_000_000; // the virtual start; the real context, where claims go, starts at 0
const NOW = new Date('2025-01-02T03:04:05.000Z');

/** What the random runs went through, so that a generator that stops reaching a path fails the test. */
export const seen = {
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
  settledMidClaim: 0,
  staleAccrual: 0,
  staleDebit: 0,
  recoveryRace: 0,
  partialPools: 0,
};

export type Answer = { ok: ClaimFeesResult } | { refused: DomainError };

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
export class World {
  readonly service = new MemoryService({ virtualStartMicro: START, now: NOW });
  readonly moveIds: string[] = [];
  /** an assertion that failed inside an append (the command's error may hide it) */
  failure: unknown = null;
  /** a settlement to land at the next append to the fee account */
  during: { pool: number; creatorMicro: number } | null = null;
  private n = 0;

  constructor() {
    this.service.given(agentStream(AGENT), [agentListed]);
    this.settleIn(FOREIGN, 7_000_000); // another agent's fees: a claim naming its pool must not take them
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
    this.settleIn(POOLS[pool]!, creator);
  }

  private settleIn(poolId: string, creator: number): void {
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
      poolStream(poolId),
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

  /** A fresh claim id (an Idempotency-Key), remembered for later repeats. */
  freshMoveId(): string {
    const moveId = `m${++this.n}`;
    this.moveIds.push(moveId);
    return moveId;
  }

  /** A claim sent alone (nothing else ran since `before`): paid exactly what it answers, or refused for the rule it breaks. */
  expect(data: ClaimFeesData, before: FeeAccountState, answer: Answer): void {
    const account = this.account();
    if ('refused' in answer) {
      this.expectRefusal(data, answer.refused, claimableOf(account));
      assert.equal(account.claimedMicro, before.claimedMicro, 'a refused claim took something');
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

  /** Refused for a rule it breaks, `claimable` being what the account held when it was decided. */
  expectRefusal(data: ClaimFeesData, refusal: DomainError, claimable: number): void {
    const { reason } = refusal;
    const amount = data.amountMicro;
    assert.ok(
      amount === undefined
        ? reason === 'EXCEEDS_CLAIMABLE' && claimable < MIN_CLAIM_MICRO
        : (reason === 'VALIDATION_FAILED' && amount < MIN_CLAIM_MICRO) || (reason === 'EXCEEDS_CLAIMABLE' && amount > claimable),
      `claim of ${amount ?? 'everything'} refused ${reason} (${refusal.message}) with ${claimable} claimable`,
    );
    seen.refused++;
  }

  /** A claim answered: its transfer completed, the account and the wallet recorded the amount it answers. */
  expectPaid(data: ClaimFeesData, ok: ClaimFeesResult): void {
    assert.equal(ok.status, 'completed', `${ok.transferId} answered ${ok.status}`);
    if (data.moveId) assert.equal(ok.transferId, `${FEES}#claim-${data.moveId}`, 'the claim id comes from its moveId');
    assert.ok(ok.claimedMicro >= MIN_CLAIM_MICRO, `${ok.transferId} paid ${ok.claimedMicro}, below the minimum`);
    assert.equal(this.account().claims.get(ok.transferId)?.amountMicro, ok.claimedMicro, `${ok.transferId}: the account recorded another amount`);
    assert.equal(this.wallet().credits.get(ok.transferId)?.amountMicro, ok.claimedMicro, `${ok.transferId}: the wallet was credited another amount`);
  }

  /**
   * Claims that ran at the same time: each one paid is paid what it answers, each refused one for
   * a reason it can have, and the account took exactly what the new ones answer, once each.
   */
  expectTogether(sent: Array<[ClaimFeesData, Answer]>, before: FeeAccountState): void {
    this.check('after claims at once');
    const fresh = new Set<string>();
    for (const [data, answer] of sent) {
      if ('refused' in answer) {
        assert.ok(['EXCEEDS_CLAIMABLE', 'VALIDATION_FAILED'].includes(answer.refused.reason), `a claim at once refused ${answer.refused.reason}`);
        continue;
      }
      this.expectPaid(data, answer.ok);
      if (!before.claims.get(answer.ok.transferId)) fresh.add(answer.ok.transferId);
    }
    const taken = [...fresh].reduce((sum, id) => sum + this.account().claims.get(id)!.amountMicro, 0);
    assert.equal(this.account().claimedMicro - before.claimedMicro, taken, 'claims at once took what they answered, once each');
  }
}
