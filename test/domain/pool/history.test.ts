// The auditors' replay (domain/pool/history.ts): running figures after each event, the pool as of
// a time, and the state a stopped pool's read-model row is compared with.
import t from 'tap';
import type { PoolEvent } from '../../../domain/pool/events.ts';
import {
  eventAmounts,
  eventsAsOf,
  everFollowed,
  figuresOf,
  replayHistory,
  replayStep,
  startReplay,
  stateAsOf,
  withoutBookkeeping,
  type PoolHistoryEvent,
} from '../../../domain/pool/history.ts';
import { poolFigures } from '../../../domain/pool/ledger.ts';
import { evolve, initialState, type FollowedPool } from '../../../domain/pool/state.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { settings, terms } from './fixtures.ts';

const time = (minute: number) => new Date(Date.UTC(2025, 1, 1, 10, minute)).toISOString();
const followed = (minute: number): PoolEvent => ({
  type: 'AgentFollowed',
  data: {
    ...settings,
    agentId: 'a1',
    userId: 'u1',
    walletContext: 'virtual',
    poolId: 'u1.a1.virtual',
    walletMode: 'VIRTUAL',
    terms,
    subscribedAt: time(minute),
  },
});
const plan = (transferId: string, amountMicro: number): TransferPlan => ({
  transferId,
  amountMicro,
  from: { kind: 'pool', userId: 'u1', agentId: 'a1', walletContext: 'virtual' },
  to: { kind: 'wallet', userId: 'u1', walletContext: 'virtual' },
});

/** A virtual pool's life, one event a minute: follow 500, a winning trade, a withdrawal, stop, follow again. */
const life: Array<[number, PoolEvent]> = [
  [0, followed(0)],
  [0, { type: 'AllocationAdded', data: { transferId: 'add-1', amountMicro: 500_000_000, confirmed: true, at: time(0) } }],
  [1, { type: 'TradeOpened', data: { tradeId: 'tr-1', marginMicro: 100_000_000, at: time(1) } }],
  [2, { type: 'TradeMarked', data: { tradeId: 'tr-1', unrealizedPnlMicro: -5_000_000, at: time(2) } }],
  [3, { type: 'TradeClosed', data: { tradeId: 'tr-1', realizedPnlMicro: 50_000_000, at: time(3) } }],
  [4, { type: 'WithdrawalRequested', data: { transfer: plan('w-1', 200_000_000), pending: false, at: time(4) } }],
  [5, { type: 'WithdrawalRequested', data: { transfer: plan('stop-1', 350_000_000), pending: false, at: time(5) } }],
  [5, { type: 'PoolClosed', data: { at: time(5) } }],
  [6, followed(6)],
  [6, { type: 'AllocationAdded', data: { transferId: 'add-2', amountMicro: 30_000_000, confirmed: true, at: time(6) } }],
];
const events: PoolHistoryEvent[] = life.map(([minute, event], i) => ({ id: `e${i}`, time: time(minute), event }));

t.test('every event with the running figures after it, computed by the ledger from the folded state', async (t) => {
  const steps = replayHistory(events);
  t.equal(steps.length, events.length);
  t.same(
    steps.map((s) => s.index),
    events.map((_, i) => i),
  );
  t.equal(steps[0]!.figures!.allocatedUsd, 0, 'followed, nothing added yet');
  t.equal(steps[1]!.figures!.allocatedUsd, 500_000_000);
  t.match(steps[2]!.figures, { inUseUsd: 100_000_000, withdrawableUsd: 400_000_000 }, 'the trade locks its margin');
  t.match(steps[3]!.figures, { unrealizedPnlUsd: -5_000_000, netUserPayoutUsd: 495_000_000 });
  t.match(steps[4]!.figures, { realizedPnlUsd: 50_000_000, currentBalanceUsd: 550_000_000, inUseUsd: 0, estimatedSuccessFeeUsd: 10_000_000 });
  t.match(steps[5]!.figures, { allocatedUsd: 300_000_000, currentBalanceUsd: 350_000_000 });
  t.equal(steps[7]!.figures, null, 'a stopped pool holds no ledger');
  t.equal(steps[9]!.figures!.allocatedUsd, 30_000_000, 'a later follow starts anew');
  for (const step of steps) {
    const state = step.state;
    if (state.followed) {
      const expected = poolFigures(state.ledger, {
        walletContext: 'virtual',
        venue: terms.venue,
        maxLeverage: terms.maxLeverage,
        successFeePercent: terms.successFeePercent,
      });
      t.same(step.figures, expected, `figures after ${step.id} are the ledger's`);
    }
  }
  t.same(steps.at(-1)!.state, events.map((e) => e.event).reduce(evolve, initialState()), 'the last state is the fold of the stream');
});

t.test("each event's own money fields, named as the API shows them", async (t) => {
  t.same(eventAmounts(events[1]!.event), { amountUsd: 500_000_000 });
  t.same(eventAmounts(events[2]!.event), { marginUsd: 100_000_000 });
  t.same(eventAmounts(events[3]!.event), { unrealizedPnlUsd: -5_000_000 });
  t.same(eventAmounts(events[4]!.event), { realizedPnlUsd: 50_000_000 });
  t.same(eventAmounts(events[5]!.event), { amountUsd: 200_000_000 });
  t.same(eventAmounts(events[0]!.event), {}, 'a follow moves no money itself');
  t.same(
    eventAmounts({
      type: 'FeesSettled',
      data: {
        settlementId: 's',
        feeMicro: 10,
        platformMicro: 2,
        creatorMicro: 8,
        realizedMicro: 50,
        unrealizedMicro: 0,
        feesChargedBeforeMicro: 0,
        successFeePercent: 20,
        at: time(0),
      },
    }),
    {
      feeUsd: 10,
      platformFeeUsd: 2,
      creatorFeeUsd: 8,
    },
  );
  t.same(
    eventAmounts({ type: 'ReconciliationObserved', data: { status: 'GAP', venueEquityMicro: 7, venueFreeMarginMicro: null, gapMicro: -3, at: time(0) } }),
    {
      venueEquityUsd: 7,
      venueGapUsd: -3,
    },
    'unknown venue figures are left out',
  );
});

t.test('the pool as of a time: the events up to it, inclusive', async (t) => {
  t.equal(stateAsOf(events, new Date(Date.parse(time(0)) - 1)).followed, false, 'before the follow: not followed');
  const atFollow = stateAsOf(events, new Date(time(0))) as FollowedPool;
  t.equal(atFollow.ledger.confirmedIn, 500_000_000, 'an event at exactly `at` has happened');
  const afterWithdrawal = stateAsOf(events, new Date(Date.parse(time(4)) + 30_000)) as FollowedPool;
  t.equal(figuresOf(afterWithdrawal)!.allocatedUsd, 300_000_000);
  t.equal(stateAsOf(events, new Date(time(5))).followed, false, 'stopped');
  t.same(stateAsOf(events, new Date('2030-01-01T00:00:00Z')), replayHistory(events).at(-1)!.state, 'after the last event: the current state');
  t.equal(eventsAsOf(events, new Date(time(3))).length, 5);
});

t.test('a clock that stepped back never replays a later event before an earlier one', async (t) => {
  const stepped = [events[0]!, events[1]!, { ...events[2]!, time: time(9) }, { ...events[3]!, time: time(2) }];
  t.equal(eventsAsOf(stepped, new Date(time(5))).length, 2, 'the prefix ends at the first event after `at`');
});

t.test('the state a read-model row is compared with: the current one, or the last followed one after a stop', async (t) => {
  let replayed = startReplay();
  const lastFollowedAt: Array<number | null> = [];
  for (const e of events) {
    replayed = replayStep(replayed, e.event);
    lastFollowedAt.push(replayed.lastFollowed ? replayed.lastFollowed.ledger.confirmedOut : null);
  }
  t.equal(replayed.events, events.length);
  t.same(
    replayed.state,
    withoutBookkeeping(replayHistory(events).at(-1)!.state),
    'the incremental fold equals the history, without the bookkeeping only deciding reads',
  );
  t.equal(replayed.state.transfers.size, 0, 'which it drops');
  t.equal(lastFollowedAt[7], 550_000_000, 'after the stop: the figures before it, payout included');
  t.equal(replayed.lastFollowed!.ledger.confirmedIn, 30_000_000, 'reopened: the new pool');
  t.equal(startReplay().lastFollowed, null);
  t.ok(everFollowed(events));
  t.notOk(everFollowed([{ id: 'r', time: time(0), event: { type: 'TransferRejected', data: { transferId: 'x', reason: 'no follow' } } }]));
});
