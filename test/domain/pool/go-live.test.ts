// Going live (docs/decisions.md, "Trade modes and going live"): a pool followed with
// goLiveUponConfirmation false is configured but not live (GoLiveDeferred): its capital stays
// free and every trade of the agent is refused AWAITING_GO_LIVE until a follow with true makes it
// live (PoolWentLive). A live pool stays live; each opening starts from its own follow.
import t from 'tap';
import { poolDecider, type PoolCommand } from '../../../domain/pool/decide.ts';
import type { FollowSettings, PoolEvent } from '../../../domain/pool/events.ts';
import type { FollowedPool } from '../../../domain/pool/state.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { at, scenario } from '../../support/given-when-then.ts';
import { oneTrade, settings, terms } from './fixtures.ts';

const T0 = '2025-06-01T08:00:00.000Z';
const T1 = '2025-06-01T09:00:00.000Z';
const T2 = '2025-06-01T10:00:00.000Z';
const pool = { agentId: 'a1', userId: 'u1', walletContext: 'virtual' as const };
const { given } = scenario(poolDecider);
const notYet: FollowSettings = { ...settings, goLiveUponConfirmation: false };
const live: FollowSettings = { ...settings, goLiveUponConfirmation: true };

const follow = (s: FollowSettings, when: string, topsUp?: number): PoolCommand => ({
  type: 'FollowAgent',
  data: { ...pool, settings: s, terms, ...(topsUp !== undefined ? { topsUp } : {}) },
  metadata: at(when),
});
const credit = (transferId: string, s: FollowSettings, when: string, topsUp?: number): PoolCommand => {
  const transfer: TransferPlan = {
    transferId,
    amountMicro: 500_000_000,
    from: { kind: 'wallet', userId: 'u1', walletContext: 'virtual' },
    to: { kind: 'pool', ...pool, follow: { settings: s, terms, ...(topsUp !== undefined ? { topsUp } : {}) } },
  };
  return { type: 'CreditPool', data: { transfer, resumed: false }, metadata: at(when) };
};
const followed = (s: FollowSettings, when = T0): PoolEvent => ({
  type: 'AgentFollowed',
  data: { ...s, ...pool, poolId: 'u1.a1.virtual', walletMode: 'VIRTUAL', terms, subscribedAt: when },
});
const deferred = (when = T0): PoolEvent => ({ type: 'GoLiveDeferred', data: { at: when } });
const wentLive = (when: string): PoolEvent => ({ type: 'PoolWentLive', data: { at: when } });
const updated = (s: FollowSettings, when: string): PoolEvent => ({ type: 'FollowSettingsUpdated', data: { ...s, updatedAt: when } });
const added = (transferId: string, when = T0): PoolEvent => ({
  type: 'AllocationAdded',
  data: { transferId, amountMicro: 500_000_000, confirmed: true, at: when },
});
const openTrade = (tradeId: string, when: string): PoolCommand => ({ type: 'OpenTrade', data: oneTrade(tradeId, 50_000_000), metadata: at(when) });
const awaiting = (state: unknown) => (state as FollowedPool).awaitingGoLive === true;

/** A pool followed with 500 USD and goLiveUponConfirmation false. */
const configured = [followed(notYet), deferred(), added('add-1')];

t.test('a follow with goLiveUponConfirmation false opens the pool configured, not live', async (t) => {
  const when = given([]).when(follow(notYet, T0));
  when.then(t, [followed(notYet), deferred()]);
  t.ok(awaiting(when.after()), 'the pool awaits its go-live');
});

t.test('a follow with goLiveUponConfirmation true (the default) opens the pool live', async (t) => {
  const when = given([]).when(follow(live, T0));
  when.then(t, [followed(live)]);
  t.notOk(awaiting(when.after()));
});

t.test("a follow's credit that opens the pool defers its go-live the same way", async (t) => {
  given([])
    .when(credit('add-1', notYet, T0))
    .then(t, [followed(notYet), deferred(), added('add-1')]);
  given([])
    .when(credit('add-1', live, T0))
    .then(t, [followed(live), added('add-1')]);
});

t.test('a pool not live refuses every trade AWAITING_GO_LIVE and locks nothing', async (t) => {
  const when = given(configured).when(openTrade('tr-1', T1));
  when.then(t, [
    {
      type: 'TradeRefused',
      data: { tradeId: 'tr-1', reason: 'AWAITING_GO_LIVE', message: 'the follower has not gone live with this pool yet: no trade opens until they do', at: T1 },
    },
  ]);
  const after = when.after() as FollowedPool;
  t.equal(after.ledger.locked, 0, 'nothing locked');
  t.equal(after.trades.get('tr-1'), 'refused', 'final for its id');
});

t.test('AWAITING_GO_LIVE comes before the mode and the pause', async (t) => {
  const alertsPaused = { ...notYet, tradeMode: 'ALERTS_ONLY' as const, subscriptionType: 'ALERTS_ONLY' as const, isPaused: true };
  t.match(
    given([followed(alertsPaused), deferred(), added('add-1')])
      .when(openTrade('tr-1', T1))
      .events(),
    [{ data: { reason: 'AWAITING_GO_LIVE' } }],
  );
});

t.test('the same follow route with goLiveUponConfirmation true makes it live; then trades open', async (t) => {
  const goLive = given(configured).when(follow(live, T1, 1));
  goLive.then(t, [updated(live, T1), wentLive(T1)]);
  const after = goLive.after() as FollowedPool;
  t.notOk(awaiting(after), 'live');
  t.equal(after.updatedAt, T1, 'the record changed');
  t.match(
    given([...configured, updated(live, T1), wentLive(T1)])
      .when(openTrade('tr-2', T2))
      .events(),
    [{ type: 'TradeOpened', data: { tradeId: 'tr-2', marginMicro: 50_000_000 } }],
  );
});

t.test("a follow's top-up credit asking to go live makes the pool live with its capital", async (t) => {
  given(configured)
    .when(credit('add-2', live, T1, 1))
    .then(t, [updated(live, T1), wentLive(T1), added('add-2', T1)]);
});

t.test('a follow that leaves goLiveUponConfirmation false keeps the pool waiting', async (t) => {
  given(configured)
    .when(follow(notYet, T1, 1))
    .then(t, [], 'the same settings: nothing');
  const paused = { ...notYet, isPaused: true };
  const when = given(configured).when(follow(paused, T1, 1));
  when.then(t, [updated(paused, T1)], 'other settings change, the pool still waits');
  t.ok(awaiting(when.after()));
});

t.test('a live pool stays live when a later follow says false (pausing stops it)', async (t) => {
  const history = [followed(live), added('add-1')];
  const when = given(history).when(follow(notYet, T1, 1));
  when.then(t, [updated(notYet, T1)]);
  t.notOk(awaiting(when.after()), 'still live');
  t.match(
    given([...history, updated(notYet, T1)])
      .when(openTrade('tr-1', T2))
      .events(),
    [{ type: 'TradeOpened' }],
  );
});

t.test('each opening starts from its own follow: a pool stopped while waiting opens live with true', async (t) => {
  const stopped = [
    ...configured,
    {
      type: 'WithdrawalRequested',
      data: {
        transfer: {
          transferId: 'stop-1',
          amountMicro: 500_000_000,
          from: { kind: 'pool', ...pool, close: true },
          to: { kind: 'wallet', userId: 'u1', walletContext: 'virtual' },
        },
        pending: false,
        at: T1,
      },
    },
    { type: 'PoolClosed', data: { at: T1, transferId: 'stop-1' } },
  ] as PoolEvent[];
  const reopened = given(stopped).when(follow(live, T2));
  reopened.then(t, [followed(live, T2)]);
  t.notOk(awaiting(reopened.after()));
  const waitingAgain = given([followed(live), added('add-1'), ...stopped.slice(3)]).when(follow(notYet, T2));
  waitingAgain.then(t, [followed(notYet, T2), deferred(T2)]);
});
