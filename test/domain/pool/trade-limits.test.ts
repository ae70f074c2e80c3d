// The pool's side of an agent's trades (docs/domain-rules.md, "Agent trades and signals"): a group
// of trades opens whole with the margins the limits give it, or is refused whole for the first
// skip reason, and the refusal is recorded so it is final. Every limit at its boundary, the daily
// loss measured from 00:00 UTC net of capital moved, percent sizes, caps, repeats and releases.
import t from 'tap';
import { poolDecider, type PoolCommand } from '../../../domain/pool/decide.ts';
import type { FollowSettings, PoolEvent } from '../../../domain/pool/events.ts';
import { ledgerTermsOf, poolFigures } from '../../../domain/pool/ledger.ts';
import { tradeLimitsOf, type TradeLimits } from '../../../domain/pool/limits.ts';
import { openTradeRefs } from '../../../domain/pool/queries.ts';
import type { FollowedPool, PoolState } from '../../../domain/pool/state.ts';
import type { TradeAsk } from '../../../domain/pool/trades.ts';
import { resolveTarget } from '../../../domain/signal/resolve.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { at, scenario } from '../../support/given-when-then.ts';
import { noLimits, settings, terms } from './fixtures.ts';

const DAY1 = '2025-05-10';
const DAY2 = '2025-05-11';
const time = (day: string, hms: string) => `${day}T${hms}Z`;
const NOW = time(DAY1, '12:00:00.000');
const usd = (n: number) => Math.round(n * 1_000_000);
const { given } = scenario(poolDecider);

const followed = (over: Partial<FollowSettings> = {}): PoolEvent => ({
  type: 'AgentFollowed',
  data: {
    ...settings,
    ...over,
    agentId: 'a1',
    userId: 'u1',
    walletContext: 'virtual',
    poolId: 'u1.a1.virtual',
    walletMode: 'VIRTUAL',
    terms,
    subscribedAt: time(DAY1, '08:00:00.000'),
  },
});
const added = (transferId: string, amountMicro: number, when = time(DAY1, '08:00:00.000')): PoolEvent => ({
  type: 'AllocationAdded',
  data: { transferId, amountMicro, confirmed: true, at: when },
});
const withdrawn = (transferId: string, amountMicro: number, when: string): PoolEvent => ({
  type: 'WithdrawalRequested',
  data: {
    transfer: {
      transferId,
      amountMicro,
      from: { kind: 'pool', userId: 'u1', agentId: 'a1', walletContext: 'virtual' },
      to: { kind: 'wallet', userId: 'u1', walletContext: 'virtual' },
    },
    pending: false,
    at: when,
  },
});
const opened = (tradeId: string, marginMicro: number, when = time(DAY1, '09:00:00.000')): PoolEvent => ({
  type: 'TradeOpened',
  data: { tradeId, marginMicro, at: when, token: 'SOL', side: 'long', signalId: null },
});
const marked = (tradeId: string, unrealizedPnlMicro: number, when: string): PoolEvent => ({
  type: 'TradeMarked',
  data: { tradeId, unrealizedPnlMicro, at: when },
});
const closed = (tradeId: string, realizedPnlMicro: number, when = time(DAY1, '10:00:00.000')): PoolEvent => ({
  type: 'TradeClosed',
  data: { tradeId, realizedPnlMicro, at: when },
});

/** A followed pool holding 1000 USD, all free. */
const pool = [followed(), added('t-add-1', usd(1000))];

const ask = (tradeId: string, size: TradeAsk['size'] | number, token = 'SOL'): TradeAsk => ({
  tradeId,
  size: typeof size === 'number' ? { marginMicro: size } : size,
  token,
  side: 'long',
  signalId: null,
});
const open = (trades: TradeAsk[], limits: Partial<TradeLimits> = {}, now = NOW): PoolCommand => ({
  type: 'OpenTrade',
  data: { limits: { ...noLimits, ...limits }, trades },
  metadata: at(now),
});
/** What a decision did to each trade: [id, margin] opened, [id, reason] refused. */
const outcome = (events: PoolEvent[]) =>
  events.map((e) => (e.type === 'TradeOpened' ? [e.data.tradeId, e.data.marginMicro] : e.type === 'TradeRefused' ? [e.data.tradeId, e.data.reason] : [e.type]));
const decided = (history: PoolEvent[], command: PoolCommand) => outcome(given(history).when(command).events());
const figures = (state: PoolState) => {
  const p = state as FollowedPool;
  return poolFigures(p.ledger, ledgerTermsOf(p));
};

t.test('a group opens with the margins decided, recorded with its token, side and signal', async (t) => {
  const signalAsk: TradeAsk = { tradeId: 'tr-1', size: { marginMicro: usd(100) }, token: 'BTCUSDT', side: 'short', signalId: 'sig-1' };
  const when = given(pool).when(open([signalAsk, ask('tr-2', { percent: 10 })]));
  when.then(t, [
    { type: 'TradeOpened', data: { tradeId: 'tr-1', marginMicro: usd(100), at: NOW, token: 'BTCUSDT', side: 'short', signalId: 'sig-1' } },
    { type: 'TradeOpened', data: { tradeId: 'tr-2', marginMicro: usd(100), at: NOW, token: 'SOL', side: 'long', signalId: null } },
  ]);
  const after = when.after() as FollowedPool;
  t.equal(after.ledger.locked, usd(200));
  t.same({ ...after.openTrades['tr-1'] }, { marginMicro: usd(100), unrealizedMicro: 0, token: 'BTCUSDT', side: 'short', signalId: 'sig-1', openedAt: NOW });
  t.match(after.day, { date: DAY1, opens: 2, lastOpenAt: NOW });
});

t.test('POOL_CLOSED: a pool not followed, never or no more, refuses every trade of the group', async (t) => {
  const both = open([ask('tr-1', usd(10)), ask('tr-2', usd(10))]);
  given([])
    .when(both)
    .then(t, [
      {
        type: 'TradeRefused',
        data: { tradeId: 'tr-1', reason: 'POOL_CLOSED', message: 'the user does not follow this agent in this wallet context', at: NOW },
      },
      {
        type: 'TradeRefused',
        data: { tradeId: 'tr-2', reason: 'POOL_CLOSED', message: 'the user does not follow this agent in this wallet context', at: NOW },
      },
    ]);
  t.same(decided([...pool, { type: 'PoolClosed', data: { at: time(DAY1, '11:00:00.000') } }], both), [
    ['tr-1', 'POOL_CLOSED'],
    ['tr-2', 'POOL_CLOSED'],
  ]);
  t.same(
    decided(pool, both),
    [
      ['tr-1', usd(10)],
      ['tr-2', usd(10)],
    ],
    'followed: both open',
  );
});

t.test('ALERTS_ONLY: a follower taking alerts only gets no trade (checked before a pause)', async (t) => {
  const alerts = [followed({ tradeMode: 'ALERTS_ONLY', subscriptionType: 'ALERTS_ONLY', isPaused: true }), added('t-add-1', usd(1000))];
  t.same(decided(alerts, open([ask('tr-1', usd(10))])), [['tr-1', 'ALERTS_ONLY']]);
  for (const mode of ['AUTO_TRADING', 'FULL_TRADING'] as const) {
    t.same(
      decided([followed({ tradeMode: mode, subscriptionType: mode }), added('t-add-1', usd(1000))], open([ask('tr-1', usd(10))])),
      [['tr-1', usd(10)]],
      `${mode} trades`,
    );
  }
  const paper = given([followed({ tradeMode: 'TEST_TRADING', subscriptionType: 'TEST_TRADING' }), added('t-add-1', usd(1000))])
    .when(open([ask('tr-1', usd(10))]))
    .events();
  t.same(
    paper.map((e) => e.type),
    ['TradeSimulated'],
    'TEST_TRADING trades on paper (test/domain/pool/test-trading.test.ts)',
  );
});

t.test('POOL_PAUSED: a paused pool opens nothing until the follower resumes it', async (t) => {
  const paused = [followed({ isPaused: true }), added('t-add-1', usd(1000))];
  t.same(decided(paused, open([ask('tr-1', usd(10))])), [['tr-1', 'POOL_PAUSED']]);
  const resumed: PoolEvent = { type: 'FollowSettingsUpdated', data: { ...settings, isPaused: false, updatedAt: time(DAY1, '11:00:00.000') } };
  t.same(decided([...paused, resumed], open([ask('tr-1', usd(10))])), [['tr-1', usd(10)]]);
});

t.test('TOKEN_NOT_ALLOWED: a token outside a whitelist, or on the blacklist, as channels write them', async (t) => {
  const white = { tokenWhitelist: ['BTC', 'ETH'] };
  t.same(decided(pool, open([ask('tr-1', usd(10), '#btc/usdt')], white)), [['tr-1', usd(10)]], 'the whitelist compares symbols');
  t.same(decided(pool, open([ask('tr-1', usd(10), 'SOL')], white)), [['tr-1', 'TOKEN_NOT_ALLOWED']]);
  t.same(
    decided(pool, open([ask('tr-1', usd(10), 'BTC'), ask('tr-2', usd(10), 'SOL')], white)),
    [
      ['tr-1', 'TOKEN_NOT_ALLOWED'],
      ['tr-2', 'TOKEN_NOT_ALLOWED'],
    ],
    'one token out refuses the group',
  );
  const black = { tokenBlacklist: ['$sol'] };
  t.same(decided(pool, open([ask('tr-1', usd(10), 'SOLUSDT')], black)), [['tr-1', 'TOKEN_NOT_ALLOWED']]);
  t.same(decided(pool, open([ask('tr-1', usd(10), 'BTC')], black)), [['tr-1', usd(10)]]);
  t.match(
    given(pool)
      .when(open([ask('tr-1', usd(10), 'SOL')], white))
      .events(),
    [{ data: { message: 'the agent does not trade SOL' } }],
  );
});

t.test('DAILY_LOSS_LIMIT: no new trade once the day lost the limit, realized or marked', async (t) => {
  const limit = { maxDailyLossPct: 10 };
  const traded = [...pool, opened('tr-1', usd(500))];
  t.same(decided([...traded, closed('tr-1', -usd(99.999999))], open([ask('tr-2', usd(10))], limit)), [['tr-2', usd(10)]], 'just under 10 % of 1000');
  t.same(decided([...traded, closed('tr-1', -usd(100))], open([ask('tr-2', usd(10))], limit)), [['tr-2', 'DAILY_LOSS_LIMIT']], '10 % reached');
  t.same(decided([...traded, marked('tr-1', -usd(99.999999), time(DAY1, '10:00:00.000'))], open([ask('tr-2', usd(10))], limit)), [['tr-2', usd(10)]]);
  t.same(
    decided([...traded, marked('tr-1', -usd(100), time(DAY1, '10:00:00.000'))], open([ask('tr-2', usd(10))], limit)),
    [['tr-2', 'DAILY_LOSS_LIMIT']],
    'an open loss counts',
  );
  t.same(decided([...traded, closed('tr-1', -usd(200))], open([ask('tr-2', usd(10))])), [['tr-2', usd(10)]], 'no limit, no refusal');
  const refusal = given([...traded, closed('tr-1', -usd(100))])
    .when(open([ask('tr-2', usd(10))], limit))
    .events();
  t.match(refusal, [{ data: { message: /lost 100 USD today, 10% or more of its 1000 USD at 00:00 UTC/ } }]);
});

t.test('DAILY_LOSS_LIMIT: the day starts at 00:00 UTC with the equity then, net of capital added and withdrawn since', async (t) => {
  const limit = { maxDailyLossPct: 10 };
  const lostDay1 = [...pool, opened('tr-1', usd(500)), closed('tr-1', -usd(200))];
  t.same(decided(lostDay1, open([ask('tr-2', usd(10))], limit)), [['tr-2', 'DAILY_LOSS_LIMIT']], 'day 1 lost 20 %');
  t.same(
    decided(lostDay1, open([ask('tr-2', usd(10))], limit, time(DAY2, '00:00:00.000'))),
    [['tr-2', usd(10)]],
    'a new day, no event yet: nothing lost today',
  );
  // Day 2 starts at 800; 200 added and 100 withdrawn: the loss is measured against 900.
  const day2 = [
    ...lostDay1,
    added('t-add-2', usd(200), time(DAY2, '01:00:00.000')),
    withdrawn('t-w-1', usd(100), time(DAY2, '02:00:00.000')),
    opened('tr-2', usd(100), time(DAY2, '03:00:00.000')),
  ];
  t.match(given(day2).state, { day: { date: DAY2, startEquityMicro: usd(800), flowsMicro: usd(100), opens: 1 } });
  const at4 = time(DAY2, '04:00:00.000');
  t.same(
    decided([...day2, marked('tr-2', -usd(89.999999), at4)], open([ask('tr-3', usd(10))], limit, time(DAY2, '12:00:00.000'))),
    [['tr-3', usd(10)]],
    'under 10 % of 900',
  );
  t.same(
    decided([...day2, marked('tr-2', -usd(90), at4)], open([ask('tr-3', usd(10))], limit, time(DAY2, '12:00:00.000'))),
    [['tr-3', 'DAILY_LOSS_LIMIT']],
    '10 % of 900',
  );
  // Counted as profit, the add would hide a loss; counted as loss, the withdrawal would invent one.
  t.same(
    decided([...day2, withdrawn('t-w-2', usd(400), at4)], open([ask('tr-3', usd(10))], limit, time(DAY2, '12:00:00.000'))),
    [['tr-3', usd(10)]],
    'a withdrawal is no loss',
  );
});

t.test('MAX_OPEN_POSITIONS: open trades and the group together, at most the limit', async (t) => {
  const limit = { maxOpenPositions: 3 };
  const two = [...pool, opened('tr-1', usd(10)), opened('tr-2', usd(10))];
  t.same(decided(two, open([ask('tr-3', usd(10))], limit)), [['tr-3', usd(10)]], '3 open: at the limit');
  t.same(
    decided(two, open([ask('tr-3', usd(10)), ask('tr-4', usd(10))], limit)),
    [
      ['tr-3', 'MAX_OPEN_POSITIONS'],
      ['tr-4', 'MAX_OPEN_POSITIONS'],
    ],
    '4: over',
  );
  t.same(decided([...two, opened('tr-3', usd(10))], open([ask('tr-4', usd(10))], limit)), [['tr-4', 'MAX_OPEN_POSITIONS']]);
  t.same(
    decided([...two, opened('tr-3', usd(10)), closed('tr-1', 0)], open([ask('tr-4', usd(10))], limit)),
    [['tr-4', usd(10)]],
    'a closed trade frees its place',
  );
});

t.test('MAX_TRADES_PER_DAY: trades opened this UTC day, closed ones included, and the group', async (t) => {
  const limit = { maxTradesPerDay: 2 };
  const one = [...pool, opened('tr-1', usd(10)), closed('tr-1', 0)];
  t.same(decided(one, open([ask('tr-2', usd(10))], limit)), [['tr-2', usd(10)]], '2 today: at the limit');
  t.same(decided(one, open([ask('tr-2', usd(10)), ask('tr-3', usd(10))], limit)), [
    ['tr-2', 'MAX_TRADES_PER_DAY'],
    ['tr-3', 'MAX_TRADES_PER_DAY'],
  ]);
  const two = [...one, opened('tr-2', usd(10), time(DAY1, '11:00:00.000'))];
  t.same(decided(two, open([ask('tr-3', usd(10))], limit)), [['tr-3', 'MAX_TRADES_PER_DAY']]);
  const tomorrow = time(DAY2, '00:00:00.000');
  t.same(
    decided(two, open([ask('tr-3', usd(10)), ask('tr-4', usd(10))], limit, tomorrow)),
    [
      ['tr-3', usd(10)],
      ['tr-4', usd(10)],
    ],
    'the count starts again at 00:00 UTC',
  );
});

t.test('COOLDOWN: seconds since the last open, also across midnight', async (t) => {
  const limit = { cooldownSeconds: 60 };
  const last = [...pool, opened('tr-1', usd(10), time(DAY1, '11:59:00.000'))];
  t.same(decided(last, open([ask('tr-2', usd(10))], limit, time(DAY1, '12:00:00.000'))), [['tr-2', usd(10)]], '60 s: at the limit');
  t.same(decided(last, open([ask('tr-2', usd(10))], limit, time(DAY1, '11:59:59.999'))), [['tr-2', 'COOLDOWN']]);
  const lateNight = [...pool, opened('tr-1', usd(10), time(DAY1, '23:59:30.000'))];
  const daily = { ...limit, maxTradesPerDay: 1 };
  t.same(
    decided(lateNight, open([ask('tr-2', usd(10))], daily, time(DAY2, '00:00:10.000'))),
    [['tr-2', 'COOLDOWN']],
    'the day count starts again, the cooldown does not',
  );
  t.same(decided(lateNight, open([ask('tr-2', usd(10))], daily, time(DAY2, '00:00:30.000'))), [['tr-2', usd(10)]]);
});

t.test('BELOW_MIN_TRADE: a margin under the smallest trade, or of nothing', async (t) => {
  const limit = { minTradeMicro: usd(10) };
  t.same(decided(pool, open([ask('tr-1', usd(10))], limit)), [['tr-1', usd(10)]], 'at the minimum');
  t.same(decided(pool, open([ask('tr-1', usd(9.999999))], limit)), [['tr-1', 'BELOW_MIN_TRADE']]);
  t.same(decided(pool, open([ask('tr-1', { percent: 1 })], limit)), [['tr-1', usd(10)]], '1 % of 1000');
  t.same(decided(pool, open([ask('tr-1', { percent: 0.99 })], limit)), [['tr-1', 'BELOW_MIN_TRADE']]);
  t.same(decided(pool, open([ask('tr-1', usd(50)), ask('tr-2', usd(5))], limit)), [
    ['tr-1', 'BELOW_MIN_TRADE'],
    ['tr-2', 'BELOW_MIN_TRADE'],
  ]);
  const dust = [followed(), added('t-add-1', 50)];
  t.same(decided(dust, open([ask('tr-1', { percent: 0.01 })])), [['tr-1', 'BELOW_MIN_TRADE']], '0.01 % of 50 micro-USD rounds to nothing');
});

t.test('INSUFFICIENT_CAPITAL: the margins together, at most the capital free', async (t) => {
  t.same(decided(pool, open([ask('tr-1', usd(1000))])), [['tr-1', usd(1000)]], 'all that is free');
  t.same(decided(pool, open([ask('tr-1', usd(1000.000001))])), [['tr-1', 'INSUFFICIENT_CAPITAL']]);
  const locked = [...pool, opened('tr-0', usd(400))];
  t.same(decided(locked, open([ask('tr-1', usd(600))])), [['tr-1', usd(600)]]);
  t.same(decided(locked, open([ask('tr-1', usd(600)), ask('tr-2', 1)])), [
    ['tr-1', 'INSUFFICIENT_CAPITAL'],
    ['tr-2', 'INSUFFICIENT_CAPITAL'],
  ]);
  t.match(
    given(locked)
      .when(open([ask('tr-1', usd(600.5))]))
      .events(),
    [{ data: { message: 'the trades need 600.5 USD of margin; the pool has 600 USD free' } }],
  );
});

t.test('percent sizes: of the capital free before the group, rounded down to the micro-USD', async (t) => {
  const odd = [followed(), added('t-add-1', 333_333_333)];
  t.same(decided(odd, open([ask('tr-1', { percent: 33.33 })])), [['tr-1', 111_099_999]], 'floor(333.333333 × 33.33 %) = 111.099999');
  t.same(
    decided(pool, open([ask('tr-1', { percent: 50 }), ask('tr-2', { percent: 50 })])),
    [
      ['tr-1', usd(500)],
      ['tr-2', usd(500)],
    ],
    'both of the same 1000',
  );
  t.same(decided(pool, open([ask('tr-1', { percent: 50 }), ask('tr-2', { percent: 50.01 })])), [
    ['tr-1', 'INSUFFICIENT_CAPITAL'],
    ['tr-2', 'INSUFFICIENT_CAPITAL'],
  ]);
  t.same(decided([...pool, opened('tr-0', usd(400))], open([ask('tr-1', { percent: 50 })])), [['tr-1', usd(300)]], 'of what is free, not of the pool');
  t.same(decided(pool, open([ask('tr-1', { percent: 100 })])), [['tr-1', usd(1000)]]);
});

t.test('maxPositionPct caps a margin at a percent of equity; it does not refuse', async (t) => {
  const limit = { maxPositionPct: 25 };
  t.same(
    decided(pool, open([ask('tr-1', usd(400)), ask('tr-2', { percent: 10 })], limit)),
    [
      ['tr-1', usd(250)],
      ['tr-2', usd(100)],
    ],
    '400 capped at 250; 100 under the cap',
  );
  const up = [...pool, opened('tr-0', usd(100)), marked('tr-0', usd(200), time(DAY1, '10:00:00.000'))];
  t.same(decided(up, open([ask('tr-1', usd(400))], limit)), [['tr-1', usd(300)]], '25 % of an equity of 1200 (marked)');
  t.same(
    decided(pool, open([ask('tr-1', usd(400))], { maxPositionPct: 0.5, minTradeMicro: usd(10) })),
    [['tr-1', 'BELOW_MIN_TRADE']],
    'capped under the smallest trade',
  );
});

t.test('both or neither: a group of two where one cannot open is refused whole', async (t) => {
  const each = given(pool).when(open([ask('tr-1', usd(600)), ask('tr-2', usd(500))]));
  t.same(
    outcome(each.events()),
    [
      ['tr-1', 'INSUFFICIENT_CAPITAL'],
      ['tr-2', 'INSUFFICIENT_CAPITAL'],
    ],
    'each fits alone, not together',
  );
  const after = each.after() as FollowedPool;
  t.equal(after.ledger.locked, 0, 'nothing locked');
  t.same([after.trades.get('tr-1'), after.trades.get('tr-2')], ['refused', 'refused']);
  t.same(
    decided(pool, open([ask('tr-1', usd(100)), ask('tr-2', usd(1000.000001))])),
    [
      ['tr-1', 'INSUFFICIENT_CAPITAL'],
      ['tr-2', 'INSUFFICIENT_CAPITAL'],
    ],
    'the second alone would not fit',
  );
  t.same(decided(pool, open([ask('tr-1', usd(600)), ask('tr-2', usd(400))])), [
    ['tr-1', usd(600)],
    ['tr-2', usd(400)],
  ]);
});

t.test('a group is decided once: a repeat changes nothing; a group mixing decided and new ids is an invariant broken', async (t) => {
  const group = open([ask('tr-1', usd(100)), ask('tr-2', usd(100))]);
  const first = given(pool).when(group);
  const decidedOnce = [...pool, ...first.events()];
  given(decidedOnce).when(group).then(t, [], 'the same group again');
  given(decidedOnce)
    .when(open([ask('tr-1', usd(300)), ask('tr-2', { percent: 5 })], { maxOpenPositions: 1 }))
    .then(t, [], 'its ids with other sizes or limits');
  given(decidedOnce)
    .when(open([ask('tr-2', usd(100)), ask('tr-3', usd(100))]))
    .thenViolates(t, /decided once, whole/);
});

t.test('a refused trade stays refused: asked again once it would fit, closed or marked, nothing changes', async (t) => {
  const refusal = given(pool).when(open([ask('tr-1', usd(1500))]));
  const refused = [...pool, ...refusal.events(), added('t-add-2', usd(1000), time(DAY1, '11:00:00.000'))];
  given(refused)
    .when(open([ask('tr-1', usd(1500))]))
    .then(t, [], 'the pool could pay it now: still refused');
  given(refused)
    .when({ type: 'CloseTrade', data: { tradeId: 'tr-1', realizedPnlMicro: 0 }, metadata: at(NOW) })
    .then(t, []);
  given(refused)
    .when({ type: 'MarkTrade', data: { tradeId: 'tr-1', unrealizedPnlMicro: 0 }, metadata: at(NOW) })
    .thenRefused(t, 'TRADE_NOT_FOUND');
  t.same(figures(given(refused).state).lockedMarginUsd, 0);
  t.equal((refusal.after() as FollowedPool).updatedAt, time(DAY1, '08:00:00.000'), 'a refusal changes no record');
});

const marginPlan = (tradeId: string, over: Partial<TransferPlan> = {}): TransferPlan => ({
  transferId: `${tradeId}:margin`,
  amountMicro: 0,
  from: { kind: 'pool', userId: 'u1', agentId: 'a1', walletContext: 'virtual' },
  to: { kind: 'trade', tradeId, poolId: 'u1.a1.virtual' },
  ...over,
});

t.test("released: a trade its destination refused gives its margin back whole; the transfer's amount is the margin decided", async (t) => {
  const plan = marginPlan('tr-1');
  const opening = given(pool).when(open([{ ...ask('tr-1', { percent: 12.5 }), transfer: plan }]));
  opening.then(t, [
    {
      type: 'TradeOpened',
      data: { tradeId: 'tr-1', marginMicro: usd(125), at: NOW, token: 'SOL', side: 'long', signalId: null, transfer: { ...plan, amountMicro: usd(125) } },
    },
  ]);
  const trading = [...pool, ...opening.events()];
  const release = (realizedPnlMicro: number): PoolCommand => ({
    type: 'CloseTrade',
    data: { tradeId: 'tr-1', realizedPnlMicro, transferId: 'tr-1.return', released: true },
    metadata: at(NOW),
  });
  const released = given(trading).when(release(0));
  released.then(t, [{ type: 'TradeClosed', data: { tradeId: 'tr-1', realizedPnlMicro: 0, transferId: 'tr-1.return', released: true, at: NOW } }]);
  const f = figures(released.after());
  t.same([f.lockedMarginUsd, f.currentBalanceUsd, f.withdrawableUsd], [0, usd(1000), usd(1000)], 'the margin is free again, nothing realized');
  given(trading)
    .when(release(1))
    .thenViolates(t, /PnL is 0/);
  given([...trading, ...released.events()])
    .when(release(0))
    .then(t, [], 'released once');
  given(trading)
    .when({ type: 'CloseTrade', data: { tradeId: 'tr-1', realizedPnlMicro: -usd(125) - 1, transferId: 'tr-1.return' }, metadata: at(NOW) })
    .thenViolates(t, /more than its margin/);
  const closing = given(trading).when({
    type: 'CloseTrade',
    data: { tradeId: 'tr-1', realizedPnlMicro: usd(30), transferId: 'tr-1.return' },
    metadata: at(NOW),
  });
  closing.then(
    t,
    [{ type: 'TradeClosed', data: { tradeId: 'tr-1', realizedPnlMicro: usd(30), transferId: 'tr-1.return', at: NOW } }],
    'a close names the transfer that paid it back',
  );
});

t.test("a trade's transfer pays that trade from this pool", async (t) => {
  given(pool)
    .when(open([{ ...ask('tr-1', usd(10)), transfer: marginPlan('tr-2') }]))
    .thenRefused(t, 'VALIDATION_FAILED', /transfer/);
  const otherPool = marginPlan('tr-1', { from: { kind: 'pool', userId: 'u2', agentId: 'a1', walletContext: 'virtual' } });
  given(pool)
    .when(open([{ ...ask('tr-1', usd(10)), transfer: otherPool }]))
    .thenViolates(t, /not paid by this pool/);
});

t.test('malformed groups are VALIDATION_FAILED, not refusals', async (t) => {
  const bad: Array<[string, PoolCommand]> = [
    ['a margin that is not a whole micro-USD', open([ask('tr-1', 1.5)])],
    ['a percent of 0', open([ask('tr-1', { percent: 0 })])],
    ['a percent over 100', open([ask('tr-1', { percent: 100.01 })])],
    ['a percent with 3 decimals', open([ask('tr-1', { percent: 12.345 })])],
    ['a margin and a percent', open([ask('tr-1', { marginMicro: 1, percent: 1 } as unknown as TradeAsk['size'])])],
    ['two trades with one id', open([ask('tr-1', 1), ask('tr-1', 1)])],
    ['no trade', open([])],
    ['eleven trades', open(Array.from({ length: 11 }, (_, i) => ask(`tr-${i}`, 1)))],
    ['a daily loss limit of 0', open([ask('tr-1', 1)], { maxDailyLossPct: 0 })],
  ];
  for (const [what, command] of bad) t.ok(given(pool).when(command).thenRefused(t, 'VALIDATION_FAILED'), what);
  t.same(decided(pool, open(Array.from({ length: 10 }, (_, i) => ask(`tr-${i}`, 1)))).length, 10, 'ten trades are a group');
});

t.test('the open trades a follow-up can find: their token, side and signal', async (t) => {
  const legacy: PoolEvent = { type: 'TradeOpened', data: { tradeId: 'tr-0', marginMicro: usd(10), at: time(DAY1, '09:00:00.000') } };
  const sol: TradeAsk = { tradeId: 'tr-1', size: { marginMicro: usd(10) }, token: 'SOLUSDT', side: 'long', signalId: 'sig-1' };
  const btc: TradeAsk = { tradeId: 'tr-2', size: { marginMicro: usd(10) }, token: 'BTC', side: 'short', signalId: null };
  const trading = [
    ...pool,
    legacy,
    ...given([...pool, legacy])
      .when(open([sol, btc]))
      .events(),
  ];
  const refs = openTradeRefs(given(trading).state);
  t.same(
    refs,
    [
      { tradeId: 'tr-1', token: 'SOLUSDT', side: 'long', signalId: 'sig-1' },
      { tradeId: 'tr-2', token: 'BTC', side: 'short' },
    ],
    'a trade recorded without token and side is not among them',
  );
  t.match(resolveTarget({ action: 'close', token: '$sol', closePercent: 100 }, refs), { kind: 'found', trade: { tradeId: 'tr-1' } });
  t.match(resolveTarget({ action: 'cancel' }, refs, 'sig-1'), { kind: 'found', trade: { tradeId: 'tr-1' } });
  t.same(openTradeRefs(given([]).state), []);
});

t.test("tradeLimitsOf: the agent's execution defaults, else its terms; 0 is no limit; tokens as symbols", async (t) => {
  t.same(tradeLimitsOf(undefined, terms), { ...noLimits, maxOpenPositions: 3, minTradeMicro: terms.minTradeUsd }, 'the terms: 3 positions, a 10 USD trade');
  t.same(tradeLimitsOf(undefined, { ...terms, maxConcurrentPositions: 0 }).maxOpenPositions, null);
  const defaults = {
    maxOpenPositions: 5,
    maxTradesPerDay: 0,
    cooldownSeconds: 30,
    maxDailyLossPct: 7.5,
    maxPositionPct: 20,
    tokenWhitelist: ['#btc/usdt', '$eth'],
    tokenBlacklist: ['doge-perp'],
  };
  t.same(tradeLimitsOf(defaults, terms), {
    maxOpenPositions: 5,
    maxTradesPerDay: null,
    cooldownSeconds: 30,
    maxDailyLossPct: 7.5,
    maxPositionPct: 20,
    tokenWhitelist: ['BTC', 'ETH'],
    tokenBlacklist: ['DOGE'],
    minTradeMicro: terms.minTradeUsd,
  });
});
