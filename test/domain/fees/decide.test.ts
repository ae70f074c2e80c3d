// The fee account's decider, Given / When / Then: accruals only ever add what a pool's total grew
// by, a claim takes the oldest fees first and is refused beyond what is claimable, a repeated claim
// moves nothing.
import t from 'tap';
import { feeAccountDecider, type FeeAccountCommand } from '../../../domain/fees/decide.ts';
import type { FeeEvent } from '../../../domain/fees/events.ts';
import type { FeesEndpoint, TransferPlan } from '../../../domain/transfer/plan.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const metadata = at('2025-01-02T03:04:05.000Z');
const when = '2025-01-02T03:04:05.000Z';
const M = 1_000_000;
const fees = scenario(feeAccountDecider);
const accrued = (poolId: string, creatorMicro: number, earnedMicro: number): FeeEvent => ({
  type: 'FeesAccrued',
  data: { poolId, creatorMicro, earnedMicro, at: when },
});
const plan = (transferId: string, amountMicro: number, all = false): TransferPlan & { from: FeesEndpoint } => ({
  transferId,
  amountMicro,
  from: { kind: 'fees', agentId: 'a1', developerId: 'dev', ...(all ? { all: true as const } : {}) },
  to: { kind: 'wallet', userId: 'dev', walletContext: 'real' },
});
const debit = (transfer: TransferPlan): FeeAccountCommand => ({ type: 'DebitFees', data: { transfer }, metadata });
const given = [accrued('p2', 8 * M, 8 * M), accrued('p1', 4 * M, 4 * M)];

t.test('accruing adds what each pool total grew by, nothing for a repeat or a stale total', async (t) => {
  const accrue = (earned: Array<{ poolId: string; earnedMicro: number }>): FeeAccountCommand => ({ type: 'AccrueFees', data: { earned }, metadata });
  fees
    .given(given)
    .when(
      accrue([
        { poolId: 'p2', earnedMicro: 10 * M },
        { poolId: 'p1', earnedMicro: 3 * M },
        { poolId: 'p3', earnedMicro: 0 },
      ]),
    )
    .then(t, [accrued('p2', 2 * M, 10 * M)]);
  fees
    .given(given)
    .when(accrue([{ poolId: 'p2', earnedMicro: 8 * M }]))
    .then(t, []);
  // a pool named twice (a caller that did not de-duplicate) counts once, at its larger total
  fees
    .given(given)
    .when(
      accrue([
        { poolId: 'p2', earnedMicro: 10 * M },
        { poolId: 'p2', earnedMicro: 9 * M },
        { poolId: 'p2', earnedMicro: 10 * M },
      ]),
    )
    .then(t, [accrued('p2', 2 * M, 10 * M)]);
  fees
    .given([])
    .when(
      accrue([
        { poolId: 'p9', earnedMicro: 8 * M },
        { poolId: 'p9', earnedMicro: 8 * M },
      ]),
    )
    .then(t, [accrued('p9', 8 * M, 8 * M)]);
});

t.test('a claim takes the oldest accrual first and records the plan with its amount', async (t) => {
  fees
    .given(given)
    .when(debit(plan('c1', 9 * M)))
    .then(t, [
      {
        type: 'FeesClaimed',
        data: {
          transfer: plan('c1', 9 * M),
          parts: [
            { poolId: 'p2', amountMicro: 8 * M },
            { poolId: 'p1', amountMicro: 1 * M },
          ],
          at: when,
        },
      },
    ]);
  const all = fees.given(given).when(debit(plan('c2', 0, true)));
  t.same(all.events()[0]!.data, {
    transfer: { ...plan('c2', 0, true), amountMicro: 12 * M },
    parts: [
      { poolId: 'p2', amountMicro: 8 * M },
      { poolId: 'p1', amountMicro: 4 * M },
    ],
    at: when,
  });
});

t.test('refused: beyond claimable, nothing left, below the minimum, another destination', async (t) => {
  const over = fees
    .given(given)
    .when(debit(plan('c1', 12 * M + 1)))
    .thenRefused(t, 'EXCEEDS_CLAIMABLE', /at most 12 USD/);
  t.same(over?.details, { claimableFeesUsd: 12, requestedUsd: 12.000001 });
  fees
    .given([
      ...given,
      ...fees
        .given(given)
        .when(debit(plan('c1', 0, true)))
        .events(),
    ])
    .when(debit(plan('c2', 0, true)))
    .thenRefused(t, 'EXCEEDS_CLAIMABLE', /nothing to claim/);
  fees
    .given(given)
    .when(debit(plan('c1', 9_999)))
    .thenRefused(t, 'VALIDATION_FAILED');
  fees
    .given(given)
    .when(debit({ ...plan('c1', M), to: { kind: 'wallet', userId: 'someone-else', walletContext: 'real' } }))
    .thenViolates(t, /real wallet only/);
  fees
    .given(given)
    .when(debit({ ...plan('c1', M), to: { kind: 'wallet', userId: 'dev', walletContext: 'virtual' } }))
    .thenViolates(t, /real wallet only/);
});

t.test('a repeated claim moves nothing; its id for another destination is refused', async (t) => {
  const claimed = [
    ...given,
    ...fees
      .given(given)
      .when(debit(plan('c1', 5 * M)))
      .events(),
  ];
  fees
    .given(claimed)
    .when(debit(plan('c1', 5 * M)))
    .then(t, []);
  fees
    .given(claimed)
    .when(debit(plan('c1', 0, true)))
    .then(t, [], 'a retry of the same id finds the first claim, whatever it asks');
  const s = fees.given(claimed).state;
  t.same(
    [s.earnedMicro, s.claimedMicro, s.pools.get('p2'), s.pools.get('p1')],
    [12 * M, 5 * M, { earnedMicro: 8 * M, claimedMicro: 5 * M }, { earnedMicro: 4 * M, claimedMicro: 0 }],
  );
});
