// The auditors' replay folds with the domain's own `evolve` (domain/pool/history.ts): on any
// sequence of pool events, valid decisions or not (repeated ids, legs and trades unknown to the
// pool, events after a stop), its fold ends with the pool `evolve` ends with, without the
// bookkeeping it drops, and the state it compares with a stopped pool's row is evolve's last
// followed one. Should `evolve` ever read that bookkeeping, the replay would differ here.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { poolEventSchema, type PoolEvent } from '../../../domain/pool/events.ts';
import { replayStep, startReplay, withoutBookkeeping } from '../../../domain/pool/history.ts';
import { evolve, initialState, type PoolState } from '../../../domain/pool/state.ts';
import { settings, terms } from './fixtures.ts';

const plain = { noNullPrototype: true };
/** Few ids, so that events meet the legs, trades and transfers of earlier ones. */
const transferId = fc.constantFrom('t1', 't2', 't3');
const tradeId = fc.constantFrom('x1', 'x2');
const at = fc.integer({ min: 0, max: 10_000 }).map((minute) => new Date(Date.UTC(2025, 0, 1) + minute * 60_000).toISOString());
const micro = fc.integer({ min: 1, max: 5_000_000_000 });
const pnl = fc.integer({ min: -5_000_000_000, max: 5_000_000_000 });
const event = <T extends PoolEvent['type']>(type: T, data: fc.Arbitrary<unknown>) => data.map((d) => ({ type, data: d }));
const plan = fc.record(
  {
    transferId,
    amountMicro: micro,
    from: fc.constant({ kind: 'pool', userId: 'u1', agentId: 'a1', walletContext: 'real' }),
    to: fc.constant({ kind: 'wallet', userId: 'u1', walletContext: 'real' }),
  },
  plain,
);

const poolEvent: fc.Arbitrary<PoolEvent> = fc
  .oneof(
    event(
      'AgentFollowed',
      at.map((subscribedAt) => ({
        ...settings,
        poolId: 'u1.a1.real',
        agentId: 'a1',
        userId: 'u1',
        walletContext: 'real',
        walletMode: 'REAL',
        terms,
        subscribedAt,
      })),
    ),
    event(
      'FollowSettingsUpdated',
      fc.record({ isPaused: fc.boolean(), updatedAt: at }, plain).map((s) => ({ ...settings, ...s })),
    ),
    event(
      'AllocationAdded',
      fc.record({ transferId, amountMicro: micro, confirmed: fc.constant(true), at }, { ...plain, requiredKeys: ['transferId', 'amountMicro', 'confirmed'] }),
    ),
    event('TransferRejected', fc.record({ transferId, reason: fc.constant('refused') }, plain)),
    event('AllocationPending', fc.record({ transferId, amountMicro: micro, at }, plain)),
    event('WithdrawalRequested', fc.record({ transfer: plan, pending: fc.boolean(), at }, plain)),
    event(
      'AllocationSettled',
      fc.record({ transferId, direction: fc.constantFrom('in', 'out'), outcome: fc.constantFrom('confirmed', 'failed'), amountMicro: fc.nat(), at }, plain),
    ),
    event(
      'BridgeStatusChanged',
      fc.record({ transferId, status: fc.constantFrom('BRIDGING', 'CONFIRMED'), bridgeTransactionId: fc.option(fc.constant('0xabc')), at }, plain),
    ),
    event(
      'TradeOpened',
      fc.record(
        {
          tradeId,
          marginMicro: micro,
          at,
          token: fc.constantFrom('SOL', 'BTC'),
          side: fc.constantFrom('long', 'short'),
          signalId: fc.option(fc.constant('s1')),
        },
        { ...plain, requiredKeys: ['tradeId', 'marginMicro', 'at'] },
      ),
    ),
    event('TradeRefused', fc.record({ tradeId, reason: fc.constantFrom('COOLDOWN', 'INSUFFICIENT_CAPITAL'), message: fc.constant('refused'), at }, plain)),
    event('TradeMarked', fc.record({ tradeId, unrealizedPnlMicro: pnl, at }, plain)),
    event(
      'TradeClosed',
      fc.record(
        { tradeId, realizedPnlMicro: pnl, at, transferId, released: fc.constant(true) },
        { ...plain, requiredKeys: ['tradeId', 'realizedPnlMicro', 'at'] },
      ),
    ),
    event(
      'FeesSettled',
      fc.record(
        {
          settlementId: fc.constantFrom('f1', 'f2'),
          feeMicro: micro,
          platformMicro: fc.nat(),
          creatorMicro: fc.nat(),
          realizedMicro: pnl,
          unrealizedMicro: pnl,
          feesChargedBeforeMicro: fc.nat(),
          successFeePercent: fc.integer({ min: 0, max: 100 }),
          at,
        },
        plain,
      ),
    ),
    event('PoolClosed', fc.record({ at, transferId }, { ...plain, requiredKeys: ['at'] })),
    event(
      'ReconciliationObserved',
      fc.record(
        {
          status: fc.constantFrom('IN_SYNC', 'GAP', 'UNKNOWN'),
          venueEquityMicro: fc.option(pnl),
          venueFreeMarginMicro: fc.option(pnl),
          gapMicro: fc.option(pnl),
          at,
        },
        plain,
      ),
    ),
  )
  // the events as the replay takes them: parsed by the pool's schema
  .map((e) => poolEventSchema.parse(e));

t.test("the replay's fold is evolve's, without the bookkeeping, on any sequence of pool events", async (t) => {
  fc.assert(
    fc.property(fc.array(poolEvent, { maxLength: 60 }), (events) => {
      let replayed = startReplay();
      let state = initialState();
      let lastFollowed: PoolState | null = null;
      for (const e of events) {
        replayed = replayStep(replayed, e);
        state = evolve(state, e);
        if (state.followed) lastFollowed = state;
        assert.deepEqual(replayed.state, withoutBookkeeping(state));
      }
      assert.equal(replayed.events, events.length);
      assert.deepEqual(replayed.lastFollowed, lastFollowed && withoutBookkeeping(lastFollowed));
    }),
    { numRuns: 1000 },
  );
  t.pass('1000 sequences replayed');
});
