import t from 'tap';
import { resolveSettings, targetAllocationMicro, topUpMicro } from '../../../domain/pool/allocation.ts';
import { decide, type FollowAgent } from '../../../domain/pool/decide.ts';
import type { PoolEvent } from '../../../domain/pool/events.ts';
import { evolve, initialState, nextTransferId } from '../../../domain/pool/state.ts';
import { thrown } from '../../support/domain.ts';
import { settings, terms } from './fixtures.ts';

const now = new Date('2025-01-02T03:04:05.000Z');
const later = new Date('2025-01-03T00:00:00.000Z');
const base = { poolId: 'u1.a1.virtual', agentId: 'a1', userId: 'u1', walletContext: 'virtual' as const, terms };
const follow = (data: Partial<FollowAgent['data']>): FollowAgent => ({ type: 'FollowAgent', data: { ...base, settings, now, ...data } });
const given = (events: PoolEvent[]) => events.reduce(evolve, initialState());
const followed: PoolEvent = {
  type: 'AgentFollowed',
  data: { ...settings, ...base, walletMode: 'VIRTUAL', subscribedAt: now.toISOString() },
};
const added = (transferId: string, amountMicro: number): PoolEvent => ({ type: 'AllocationAdded', data: { transferId, amountMicro, confirmed: true } });

t.test('a first follow records the settings, the agent terms and the credited transfer', async (t) => {
  const events = decide(follow({ transfer: { transferId: 'p#add-1', amountMicro: 500_000_000 } }), given([]));
  t.same(events, [followed, added('p#add-1', 500_000_000)]);
  const state = given(events);
  t.ok(state.followed);
  if (state.followed) {
    t.equal(state.ledger.confirmedIn, 500_000_000);
    t.equal(state.addCount, 1);
  }
});

t.test('following again with other settings updates the same pool', async (t) => {
  const changed = { ...settings, tradeMode: 'ALERTS_ONLY' as const, subscriptionType: 'ALERTS_ONLY' as const, isPaused: true };
  const events = decide(follow({ settings: changed, now: later }), given([followed]));
  t.same(events, [{ type: 'FollowSettingsUpdated', data: { ...changed, updatedAt: later.toISOString() } }]);
  const state = given([followed, ...events]);
  t.ok(state.followed && state.settings.isPaused && state.subscribedAt === now.toISOString(), 'subscribedAt stays the first follow');
});

t.test('following again with the same settings appends nothing', async (t) => {
  t.same(decide(follow({ now: later }), given([followed])), []);
});

t.test('following again keeps the terms of the first follow', async (t) => {
  const paused = { ...settings, isPaused: true };
  const state = given([followed, ...decide(follow({ terms: { ...terms, successFeePercent: 50 }, settings: paused }), given([followed]))]);
  t.ok(state.followed && state.terms.successFeePercent === 20);
});

t.test('a transfer already credited is not credited twice', async (t) => {
  const state = given([followed, added('p#add-1', 500_000_000)]);
  t.same(decide(follow({ transfer: { transferId: 'p#add-1', amountMicro: 500_000_000 } }), state), []);
  t.same(decide(follow({ transfer: { transferId: 'p#add-2', amountMicro: 1 } }), state), [added('p#add-2', 1)]);
});

t.test('the next transfer id follows the pool history, so a retried request reuses it', async (t) => {
  t.equal(nextTransferId('p', given([])), 'p#add-1');
  t.equal(nextTransferId('p', given([followed])), 'p#add-1');
  t.equal(nextTransferId('p', given([followed, added('p#add-1', 5)])), 'p#add-2');
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
  const pct = { allocationMode: 'PERCENTAGE_RANGE' as const, allocationPercentageMin: 5, allocationPercentageMax: 10, allocationAmountUsd: null, allocationAmountSol: null };
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
  t.equal(targetAllocationMicro({ ...none, allocationMode: 'SOL_AMOUNT', allocationAmountSol: 2_500_000_000 }, 0, solPrice), 375_308_642, '2.5 × 150.123457 = 375.3086425, floored');
  t.equal(targetAllocationMicro({ ...none, allocationMode: 'SOL_AMOUNT', allocationAmountSol: 1 }, 0, solPrice), 0, 'one lamport is worth less than a micro-USD');
  t.equal(targetAllocationMicro({ ...none, allocationMode: 'PERCENTAGE_RANGE', allocationPercentageMin: 5, allocationPercentageMax: 12.5 }, 10_000_000_000, solPrice), 1_250_000_000, 'the maximum of the range');
  t.equal(targetAllocationMicro({ ...none, allocationMode: 'PERCENTAGE_RANGE', allocationPercentageMin: 5 }, 10_000_000_000, solPrice), 500_000_000, 'the minimum when no maximum');
  t.equal(targetAllocationMicro({ ...none, allocationMode: 'PERCENTAGE_RANGE', allocationPercentageMax: 33.333333 }, 100, solPrice), 33, 'floored');
});

t.test('top-up: a follow adds only what the target exceeds, never withdraws, and respects the minimum', async (t) => {
  t.equal(topUpMicro(given([]), 500_000_000, 100_000_000), 500_000_000);
  const funded = given([followed, added('p#add-1', 500_000_000)]);
  t.equal(topUpMicro(funded, 800_000_000, 100_000_000), 300_000_000);
  t.equal(topUpMicro(funded, 200_000_000, 100_000_000), 0, 'a lower target withdraws nothing');
  t.equal(topUpMicro(funded, 0, 100_000_000), 0, 'the pool already holds the minimum');
  const err = thrown(() => topUpMicro(given([]), 99_999_999, 100_000_000));
  t.equal(err.kind, 'BAD_REQUEST');
  t.match(err.message, /minimum allocation of 100 USD/);
  t.same(err.details, { minAllocationUsd: 100 });
});
