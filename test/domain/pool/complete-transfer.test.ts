import t from 'tap';
import { decide, type CompleteTransfer } from '../../../domain/pool/decide.ts';
import type { FollowSettings, PoolEvent } from '../../../domain/pool/events.ts';
import { settings as baseSettings, terms } from './fixtures.ts';
import { evolve, initialState } from '../../../domain/pool/state.ts';
import { DomainError } from '../../../domain/shared/errors.ts';
import { decide as decideWallet } from '../../../domain/wallet/decide.ts';
import { initialState as emptyWallet } from '../../../domain/wallet/state.ts';

const debitedAt = new Date('2025-01-02T03:04:05.000Z');
const now = new Date('2025-01-02T03:04:20.000Z');
// The interrupted follow asked for alerts only, paused: the recovered pool must keep exactly that.
const settings: FollowSettings = { ...baseSettings, tradeMode: 'ALERTS_ONLY', subscriptionType: 'ALERTS_ONLY', isPaused: true };
const opening = { agentId: 'a1', settings, terms };
const complete = (transferId: string, amountMicro: number): CompleteTransfer => ({
  type: 'CompleteTransfer',
  data: { poolId: 'u1.a1.virtual', userId: 'u1', walletContext: 'virtual', transfer: { transferId, amountMicro }, opening, now },
});
const given = (events: PoolEvent[]) => events.reduce(evolve, initialState());
const followed: PoolEvent = {
  type: 'AgentFollowed',
  data: {
    ...settings,
    tradeMode: 'AUTO_TRADING',
    subscriptionType: 'AUTO_TRADING',
    isPaused: false,
    poolId: 'u1.a1.virtual',
    agentId: 'a1',
    userId: 'u1',
    walletContext: 'virtual',
    walletMode: 'VIRTUAL',
    terms: { ...terms, successFeePercent: 10 },
    subscribedAt: debitedAt.toISOString(),
  },
};
const added = (transferId: string, amountMicro: number): PoolEvent => ({ type: 'AllocationAdded', data: { transferId, amountMicro, confirmed: true } });

t.test('a first follow interrupted after its debit opens the pool with that follow settings and terms, then credits the debit', async (t) => {
  const events = decide(complete('p#add-1', 250_000_000), given([]));
  t.same(events, [
    {
      type: 'AgentFollowed',
      data: { ...settings, poolId: 'u1.a1.virtual', agentId: 'a1', userId: 'u1', walletContext: 'virtual', walletMode: 'VIRTUAL', terms, subscribedAt: now.toISOString() },
    },
    added('p#add-1', 250_000_000),
  ]);
});

t.test('an existing pool gets only the credit: its settings and terms stay as they are', async (t) => {
  const state = given([followed, added('p#add-1', 100_000_000)]);
  t.same(decide(complete('p#add-2', 200_000_000), state), [added('p#add-2', 200_000_000)]);
});

t.test('a transfer already credited is not credited again, whoever credited it', async (t) => {
  t.same(decide(complete('p#add-1', 250_000_000), given([followed, added('p#add-1', 250_000_000)])), []);
});

t.test('a non-positive amount is refused', async (t) => {
  t.throws(() => decide(complete('p#add-1', 0), given([])), DomainError);
});

t.test('the debit of a first follow carries the opening; a debit without one carries none', async (t) => {
  const data = { transferId: 'p#add-1', poolId: 'u1.a1.virtual', walletContext: 'virtual' as const, amountMicro: 5, virtualStartMicro: 10, now };
  const [, withOpening] = decideWallet({ type: 'AllocateFunds', data: { ...data, follow: opening } }, emptyWallet());
  t.same(withOpening!.data, { transferId: 'p#add-1', poolId: 'u1.a1.virtual', walletContext: 'virtual', amountMicro: 5, follow: opening });
  const [, without] = decideWallet({ type: 'AllocateFunds', data }, emptyWallet());
  t.notOk(Object.hasOwn(without!.data, 'follow'));
});
