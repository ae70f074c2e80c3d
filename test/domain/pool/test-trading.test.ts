// Test trading (docs/decisions.md, "Trade modes and going live"): a pool in TEST_TRADING executes
// the agent's trades on paper beside its real capital: the pool's limits size and check them as
// they would a real trade, and the pool records what would have opened (TradeSimulated, with the
// margin) without locking or moving anything; a refusal is recorded as for any pool.
import t from 'tap';
import { poolDecider, type PoolCommand } from '../../../domain/pool/decide.ts';
import { ledgerTermsOf, poolFigures } from '../../../domain/pool/ledger.ts';
import type { FollowSettings, PoolEvent } from '../../../domain/pool/events.ts';
import type { FollowedPool } from '../../../domain/pool/state.ts';
import { at, scenario } from '../../support/given-when-then.ts';
import { noLimits, settings, terms } from './fixtures.ts';

const T0 = '2025-06-01T08:00:00.000Z';
const T1 = '2025-06-01T09:00:00.000Z';
const { given } = scenario(poolDecider);
const testMode: FollowSettings = { ...settings, tradeMode: 'TEST_TRADING', subscriptionType: 'TEST_TRADING' };
const paper: PoolEvent[] = [
  {
    type: 'AgentFollowed',
    data: { ...testMode, agentId: 'a1', userId: 'u1', walletContext: 'virtual', poolId: 'u1.a1.virtual', walletMode: 'VIRTUAL', terms, subscribedAt: T0 },
  },
  { type: 'AllocationAdded', data: { transferId: 'add-1', amountMicro: 1_000_000_000, confirmed: true, at: T0 } },
];
const open = (percent: number, tradeId = 'tr-1'): PoolCommand => ({
  type: 'OpenTrade',
  data: {
    limits: noLimits,
    trades: [
      {
        tradeId,
        size: { percent },
        token: 'SOL',
        side: 'long',
        signalId: 'sig-1',
        transfer: {
          transferId: tradeId,
          amountMicro: 0,
          from: { kind: 'pool', agentId: 'a1', userId: 'u1', walletContext: 'virtual' },
          to: { kind: 'trade', tradeId, poolId: 'u1.a1.virtual' },
        },
      },
    ],
  },
  metadata: at(T1),
});
const figures = (state: unknown) => {
  const pool = state as FollowedPool;
  return poolFigures(pool.ledger, ledgerTermsOf(pool));
};

t.test('a test-trading pool records the trade it would open, with its would-be margin, and locks nothing', async (t) => {
  const when = given(paper).when(open(25));
  when.then(t, [{ type: 'TradeSimulated', data: { tradeId: 'tr-1', marginMicro: 250_000_000, token: 'SOL', side: 'long', signalId: 'sig-1', at: T1 } }]);
  const after = when.after() as FollowedPool;
  t.same(figures(after), figures(given(paper).state), 'every figure of the pool is as before');
  t.same(after.openTrades, {}, 'no open trade');
  t.equal(after.trades.get('tr-1'), 'simulated');
});

t.test('a paper execution is final for its trade id: the same group again records nothing', async (t) => {
  const simulated = given(paper).when(open(25)).events();
  given([...paper, ...simulated])
    .when(open(25))
    .then(t, []);
});

t.test("the pool's limits apply on paper as for real: a trade beyond the free capital is refused", async (t) => {
  const tooBig: PoolCommand = {
    type: 'OpenTrade',
    data: { limits: noLimits, trades: [{ tradeId: 'tr-1', size: { marginMicro: 2_000_000_000 }, token: 'SOL', side: 'long', signalId: null }] },
    metadata: at(T1),
  };
  t.match(given(paper).when(tooBig).events(), [{ type: 'TradeRefused', data: { reason: 'INSUFFICIENT_CAPITAL' } }]);
});

t.test('a pool switched to test trading from auto trading stops opening real trades', async (t) => {
  const auto = [{ ...paper[0]!, data: { ...(paper[0]!.data as object), tradeMode: 'AUTO_TRADING', subscriptionType: 'AUTO_TRADING' } } as PoolEvent, paper[1]!];
  t.match(given(auto).when(open(25)).events(), [{ type: 'TradeOpened' }]);
  const switched: PoolEvent = { type: 'FollowSettingsUpdated', data: { ...testMode, updatedAt: T0 } };
  t.match(
    given([...auto, switched])
      .when(open(25))
      .events(),
    [{ type: 'TradeSimulated' }],
  );
});
