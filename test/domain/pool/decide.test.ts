import t from 'tap';
import { resolveSettings, targetAllocationMicro, topUpMicro } from '../../../domain/pool/allocation.ts';
import { poolDecider, type PoolCommand } from '../../../domain/pool/decide.ts';
import type { FollowOpening, FollowSettings, PoolEvent } from '../../../domain/pool/events.ts';
import { nextTransferId } from '../../../domain/pool/queries.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { at, scenario } from '../../support/given-when-then.ts';
import { settings, terms } from './fixtures.ts';

const now = new Date('2025-01-02T03:04:05.000Z');
const later = new Date('2025-01-03T00:00:00.000Z');
const pool = { agentId: 'a1', userId: 'u1', walletContext: 'virtual' as const };
const { given } = scenario(poolDecider);
const state = (events: PoolEvent[]) => given(events).state;
const follow = (over: { settings?: FollowSettings; terms?: typeof terms; topsUp?: number; seatClaim?: string } = {}, when = now): PoolCommand => ({
  type: 'FollowAgent',
  data: { ...pool, settings, terms, ...over },
  metadata: at(when),
});
/** A transfer's credit; `follow` opens the pool (or applies its settings); without it only an open pool takes it. */
const credit = (transferId: string, amountMicro: number, opts: { follow?: FollowOpening; resumed?: boolean } = {}, when = now): PoolCommand => {
  const transfer: TransferPlan = {
    transferId,
    amountMicro,
    from: { kind: 'wallet', userId: 'u1', walletContext: 'virtual' },
    to: { kind: 'pool', ...pool, ...(opts.follow ? { follow: opts.follow } : {}) },
  };
  return { type: 'CreditPool', data: { transfer, resumed: opts.resumed ?? false }, metadata: at(when) };
};
const followed: PoolEvent = {
  type: 'AgentFollowed',
  data: { ...settings, ...pool, poolId: 'u1.a1.virtual', walletMode: 'VIRTUAL', terms, subscribedAt: now.toISOString() },
};
const added = (transferId: string, amountMicro: number, when = now): PoolEvent => ({
  type: 'AllocationAdded',
  data: { transferId, amountMicro, confirmed: true, at: when.toISOString() },
});
const paused = { ...settings, isPaused: true };
const settingsUpdated = (s: FollowSettings, when = now): PoolEvent => ({ type: 'FollowSettingsUpdated', data: { ...s, updatedAt: when.toISOString() } });

t.test('a follow without capital opens the pool with the settings and the agent terms', async (t) => {
  given([]).when(follow()).then(t, [followed]);
});

t.test('following again with other settings updates the same pool; subscribedAt stays the first follow', async (t) => {
  const changed = { ...settings, tradeMode: 'ALERTS_ONLY' as const, subscriptionType: 'ALERTS_ONLY' as const, isPaused: true };
  const again = given([followed]).when(follow({ settings: changed }, later));
  again.then(t, [settingsUpdated(changed, later)]);
  const after = again.after();
  t.ok(after.followed && after.settings.isPaused && after.subscribedAt === now.toISOString());
});

t.test('following again with the same settings appends nothing', async (t) => {
  given([followed]).when(follow({}, later)).then(t, []);
});

t.test('following again keeps the terms of the first follow', async (t) => {
  const after = given([followed])
    .when(follow({ terms: { ...terms, successFeePercent: 50 }, settings: paused }))
    .after();
  t.ok(after.followed && after.terms.successFeePercent === 20);
});

t.test("a transfer's first credit opens the pool with its follow, then credits the amount", async (t) => {
  const opening = given([]).when(credit('p#add-1', 500_000_000, { follow: { settings, terms } }));
  opening.then(t, [followed, added('p#add-1', 500_000_000)]);
  const after = opening.after();
  t.ok(after.followed && after.ledger.confirmedIn === 500_000_000);
});

t.test('a first follow interrupted after its debit is resumed: the credit opens the pool with that follow, then credits', async (t) => {
  // The recovery has only the debit's plan: the pool must get exactly the settings the interrupted request asked for.
  const alertsPaused: FollowSettings = { ...settings, tradeMode: 'ALERTS_ONLY', subscriptionType: 'ALERTS_ONLY', isPaused: true };
  const resuming = given([]).when(credit('p#add-1', 250_000_000, { follow: { settings: alertsPaused, terms }, resumed: true }, later));
  resuming.then(t, [
    { type: 'AgentFollowed', data: { ...alertsPaused, ...pool, poolId: 'u1.a1.virtual', walletMode: 'VIRTUAL', terms, subscribedAt: later.toISOString() } },
    added('p#add-1', 250_000_000, later),
  ]);
});

t.test('a credit to an existing pool applies the request follow settings when they differ', async (t) => {
  given([followed])
    .when(credit('p#add-1', 1, { follow: { settings: paused, terms, topsUp: 1 } }))
    .then(t, [settingsUpdated(paused), added('p#add-1', 1)]);
  given([followed])
    .when(credit('p#add-1', 1, { follow: { settings, terms, topsUp: 1 } }))
    .then(t, [added('p#add-1', 1)], 'same settings: the credit alone');
});

t.test('a resumed credit (the recovery) moves the money and leaves the settings as they are', async (t) => {
  given([followed])
    .when(credit('p#add-1', 1, { follow: { settings: paused, terms, topsUp: 1 }, resumed: true }))
    .then(t, [added('p#add-1', 1)]);
});

t.test('a transfer already credited is not credited twice', async (t) => {
  given([followed, added('p#add-1', 500_000_000)])
    .when(credit('p#add-1', 500_000_000))
    .then(t, []);
  given([followed, added('p#add-1', 500_000_000)])
    .when(credit('p#add-2', 1))
    .then(t, [added('p#add-2', 1)]);
});

t.test('a pool that is not open rejects a credit without a follow, for good', async (t) => {
  const rejecting = given([]).when(credit('p#add-1', 75_000_000));
  const rejected = rejecting.events();
  t.match(rejected, [{ type: 'TransferRejected', data: { transferId: 'p#add-1' } }]);
  t.same([...rejecting.after().transfers.entries()], [['p#add-1', 'rejected']]);
  given(rejected)
    .when(credit('p#add-1', 75_000_000, { follow: { settings, terms } }))
    .then(t, [], 'a later credit of the same id is refused too');
  given(rejected)
    .when(credit('p#add-2', 75_000_000, { follow: { settings, terms } }))
    .then(t, [followed, added('p#add-2', 75_000_000)], 'a new transfer opens it');
});

t.test('the next transfer id follows the pool history, so a retried request reuses it', async (t) => {
  t.equal(nextTransferId('p', state([])), 'p#add-1');
  t.equal(nextTransferId('p', state([followed])), 'p#add-1');
  t.equal(nextTransferId('p', state([followed, added('p#add-1', 5)])), 'p#add-2');
  t.equal(
    nextTransferId('p', state([{ type: 'TransferRejected', data: { transferId: 'p#add-1', reason: 'closed' } }])),
    'p#add-2',
    'a rejected id is never reused',
  );
});

t.test('settings: a first follow without choices asks for the agent minimum in USD, auto-trading, live', async (t) => {
  t.same(resolveSettings({}, null, terms), {
    ...settings,
    allocationAmountUsd: terms.minAllocationUsd,
  });
});

t.test('settings: absent choices keep the current ones, given ones replace them', async (t) => {
  const current = { ...settings, isPaused: true };
  t.same(resolveSettings({}, current, terms), current);
  const pct = {
    allocationMode: 'PERCENTAGE_RANGE' as const,
    allocationPercentageMin: 5,
    allocationPercentageMax: 10,
    allocationAmountUsd: null,
    allocationAmountSol: null,
  };
  t.same(resolveSettings({ allocation: pct, tradeMode: 'TEST_TRADING' }, current, terms), {
    ...current,
    ...pct,
    tradeMode: 'TEST_TRADING',
    subscriptionType: 'TEST_TRADING',
  });
});

t.test('target: every allocation mode in exact integer micro-USD', async (t) => {
  const none = { allocationPercentageMin: null, allocationPercentageMax: null, allocationAmountUsd: null, allocationAmountSol: null };
  const solPrice = 150_123_457; // 150.123457 USD
  t.equal(targetAllocationMicro({ ...none, allocationMode: 'USD_AMOUNT', allocationAmountUsd: 250_500_000 }, 0, solPrice), 250_500_000);
  t.equal(
    targetAllocationMicro({ ...none, allocationMode: 'SOL_AMOUNT', allocationAmountSol: 2_500_000_000 }, 0, solPrice),
    375_308_642,
    '2.5 × 150.123457 = 375.3086425, floored',
  );
  t.equal(
    targetAllocationMicro({ ...none, allocationMode: 'SOL_AMOUNT', allocationAmountSol: 1 }, 0, solPrice),
    0,
    'one lamport is worth less than a micro-USD',
  );
  t.equal(
    targetAllocationMicro({ ...none, allocationMode: 'PERCENTAGE_RANGE', allocationPercentageMin: 5, allocationPercentageMax: 12.5 }, 10_000_000_000, solPrice),
    1_250_000_000,
    'the maximum of the range',
  );
  t.equal(
    targetAllocationMicro({ ...none, allocationMode: 'PERCENTAGE_RANGE', allocationPercentageMin: 5 }, 10_000_000_000, solPrice),
    500_000_000,
    'the minimum when no maximum',
  );
  t.equal(targetAllocationMicro({ ...none, allocationMode: 'PERCENTAGE_RANGE', allocationPercentageMax: 33.333333 }, 100, solPrice), 33, 'floored');
});

t.test('top-up: a follow adds only what the target exceeds, never withdraws, and respects the minimum', async (t) => {
  t.equal(topUpMicro(state([]), 500_000_000, 100_000_000), 500_000_000);
  const funded = state([followed, added('p#add-1', 500_000_000)]);
  t.equal(topUpMicro(funded, 800_000_000, 100_000_000), 300_000_000);
  t.equal(topUpMicro(funded, 200_000_000, 100_000_000), 0, 'a lower target withdraws nothing');
  t.equal(topUpMicro(funded, 0, 100_000_000), 0, 'the pool already holds the minimum');
  t.throws(() => topUpMicro(state([]), 99_999_999, 100_000_000), {
    reason: 'BELOW_MIN_ALLOCATION',
    message: /minimum allocation of 100 USD/,
    details: { minAllocationUsd: 100 },
  });
});

// ---- a follow lands only on the pool as it found it; an opening holds its beta seat claim ----

const opening = (seatClaim?: string) => ({ settings, terms, ...(seatClaim ? { seatClaim } : {}) });
const topUp = (s: FollowSettings = settings, topsUp = 1) => ({ settings: s, terms, topsUp });
const stopped: PoolEvent = { type: 'PoolClosed', data: { at: now.toISOString(), transferId: 'p#stop-1' } };
const claimed = (seatClaim: string, when = now): PoolEvent => ({
  type: 'AgentFollowed',
  data: { ...followed.data, subscribedAt: when.toISOString(), seatClaim },
});

t.test('a top-up planned on the open pool never reopens it once stopped: rejected, the money goes back', async (t) => {
  const late = given([followed, added('p#add-1', 10_000_000), stopped]).when(credit('p#add-2', 20_000_000, { follow: topUp() }, later));
  late.then(t, [
    {
      type: 'TransferRejected',
      data: { transferId: 'p#add-2', reason: 'the user stopped following this pool while the follow was in flight; the follow plans again' },
    },
  ]);
  t.notOk(late.after().followed, 'the pool stays stopped');
  const thirty = { ...settings, allocationAmountUsd: 30_000_000 };
  given([followed, added('p#add-1', 10_000_000)])
    .when(credit('p#add-2', 20_000_000, { follow: topUp(thirty) }))
    .then(t, [settingsUpdated(thirty), added('p#add-2', 20_000_000)], 'on the open pool: its settings and the money');
  const reopened = [followed, added('p#add-1', 10_000_000), stopped, claimed('p#add-3@z'), added('p#add-3', 10_000_000)];
  given(reopened)
    .when(credit('p#add-2', 20_000_000, { follow: topUp(thirty) }, later))
    .then(
      t,
      [
        {
          type: 'TransferRejected',
          data: { transferId: 'p#add-2', reason: 'the user stopped following this pool while the follow was in flight; the follow plans again' },
        },
      ],
      'nor tops up the opening another follow made since',
    );
  given(reopened)
    .when(credit('p#add-2', 20_000_000, { follow: topUp(thirty), resumed: true }, later))
    .then(
      t,
      [
        {
          type: 'TransferRejected',
          data: { transferId: 'p#add-2', reason: 'the user stopped following this pool while the follow was in flight; the follow plans again' },
        },
      ],
      'not even when the recovery finishes it',
    );
  given(reopened)
    .when(credit('p#add-4', 20_000_000, { follow: topUp(thirty, 2) }))
    .then(t, [settingsUpdated(thirty), added('p#add-4', 20_000_000)], 'a top-up planned on that opening does');
});

t.test('an opening that finds the pool opened meanwhile is rejected, its amount planned for an empty pool, whoever credits it', async (t) => {
  const openedMeanwhile: PoolEvent[] = [
    {
      type: 'TransferRejected',
      data: { transferId: 'p#add-1', reason: 'another follow opened this pool while the follow was in flight; the follow plans again' },
    },
  ];
  given([followed])
    .when(credit('p#add-1', 30_000_000, { follow: opening('p#add-1@x') }))
    .then(t, openedMeanwhile);
  given([followed])
    .when(credit('p#add-1', 30_000_000, { follow: opening('p#add-1@x'), resumed: true }))
    .then(t, openedMeanwhile, 'the recovery too');
  given([followed])
    .when(credit('p#add-1', 30_000_000, { resumed: true }))
    .then(t, [added('p#add-1', 30_000_000)], 'an add (no follow) tops up the open pool');
});

t.test('an opening credit opens the pool with its seat claim; the pool keeps it while open and spends it when stopped', async (t) => {
  const opens = given([followed, added('p#add-1', 10_000_000), stopped]).when(credit('p#add-2', 30_000_000, { follow: opening('p#add-2@x') }, later));
  opens.then(t, [claimed('p#add-2@x', later), added('p#add-2', 30_000_000, later)]);
  const open = opens.after();
  t.ok(open.followed && open.seatClaim === 'p#add-2@x', 'the open pool holds the claim');
  const closedAgain = given([
    followed,
    added('p#add-1', 10_000_000),
    stopped,
    ...opens.events(),
    { ...stopped, data: { at: later.toISOString(), transferId: 'p#stop-2' } },
  ]).state;
  t.same(closedAgain.closedClaims, ['p#add-2@x'], "the stopped opening's claim is spent");
  t.same(given([followed, stopped]).state.closedClaims, undefined, 'an opening without a claim (before claims, or a live agent) spends none');
});

t.test('a settings-only follow planned on the open pool is refused once it stopped; an opening one opens with its claim', async (t) => {
  given([followed, stopped])
    .when(follow({ topsUp: 1, settings: paused }))
    .thenRefused(t, 'SUBSCRIPTION_NOT_FOUND', /stopped following this pool while the follow was in flight/);
  given([followed, stopped, claimed('p#add-2@y')])
    .when(follow({ topsUp: 1, settings: paused }))
    .thenRefused(t, 'SUBSCRIPTION_NOT_FOUND', undefined);
  given([followed, stopped])
    .when(follow({ seatClaim: 'p#add-1@y' }))
    .then(t, [claimed('p#add-1@y')]);
  given([followed])
    .when(follow({ topsUp: 1, settings: paused }))
    .then(t, [settingsUpdated(paused)], 'on the open pool it changes the settings');
});
