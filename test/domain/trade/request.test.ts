import t from 'tap';
import { tradeDecider, type TradeCommand } from '../../../domain/trade/decide.ts';
import { at, scenario } from '../../support/given-when-then.ts';
import { at1, expiresAt, filledAt50k, history, mark, now, request, pb, pt, usd } from './fixtures.ts';

const { given } = scenario(tradeDecider);
const zone = (lowUsd: number, highUsd: number) => ({ kind: 'zone' as const, low: pb(usd(lowUsd)), high: pb(usd(highUsd)) });

t.test('a market long is requested and filled at once at the mark: size, entry fee and margin', async (t) => {
  given([])
    .when(request())
    .then(t, [
      {
        type: 'TradeRequested',
        data: {
          tradeId: 't1',
          poolId: 'u1.a1.virtual',
          token: 'BTC',
          decimals: 8,
          side: 'long',
          leverage: 5,
          notionalMicro: usd(1000),
          entry: { kind: 'market' },
          stopLoss: pt(usd(48_000)),
          targets: [
            { tier: 1, price: pt(usd(52_000)), closeBps: 5000, closesRest: false },
            { tier: 2, price: pt(usd(54_000)), closeBps: 5000, closesRest: true },
          ],
          trailing: null,
          breakevenOnTarget: null,
          slippageBps: 50,
          feeBps: 10,
          expiresAt,
          at: at1,
        },
      },
      filledAt50k,
    ]);
});

t.test('the filled trade exposes what the executor needs', async (t) => {
  const state = given([]).when(request()).after();
  t.match(state, { status: 'open', side: 'long', leverage: 5, filledUnits: 2_000_000n, remainingUnits: 2_000_000n, averageFill: pb(usd(50_000)) });
  t.match(state, { marginMicro: usd(200), feesPaidMicro: usd(1), realizedPnlMicro: 0, stop: { price: pb(usd(48_000)), kind: 'STOP_LOSS' } });
});

t.test('the margin is notional / leverage rounded up', async (t) => {
  const events = given([])
    .when(request({ leverage: 3 }))
    .events();
  t.match(events[1], { type: 'TradeFilled', data: { marginMicro: 333_333_334 } });
});

t.test('a buy is spot: any leverage but 1 is refused', async (t) => {
  given([])
    .when(request({ side: 'buy', leverage: 2 }))
    .thenRefused(t, 'VALIDATION_FAILED', /spot/);
  t.match(
    given([])
      .when(request({ side: 'buy', leverage: 1 }))
      .events()[1],
    { type: 'TradeFilled', data: { marginMicro: usd(1000) } },
  );
});

t.test('a zone holding the mark fills at the mark', async (t) => {
  const events = given([])
    .when(request({ entry: zone(49_000, 51_000) }))
    .events();
  t.match(events[1], { type: 'TradeFilled', data: { price: pt(usd(50_000)) } });
});

t.test('a zone written high to low is kept low to high', async (t) => {
  t.match(
    given([])
      .when(request({ entry: zone(51_000, 49_000) }))
      .events()[0],
    { data: { entry: { kind: 'zone', low: '49000', high: '51000' } } },
  );
});

t.test('a mark just outside the zone, within the slippage tolerance, fills at the mark', async (t) => {
  // 50 bps above 49,900 is 50,149.5: the mark at 50,000 is within it.
  t.match(
    given([])
      .when(request({ entry: zone(49_500, 49_900) }))
      .events()[1],
    { type: 'TradeFilled', data: { price: pt(usd(50_000)) } },
  );
});

t.test('a mark beyond the zone and its slippage leaves the entry pending until expiresAt', async (t) => {
  const events = given([])
    .when(request({ entry: zone(49_000, 49_500) }))
    .events();
  t.same(events[1], { type: 'EntryPending', data: { tradeId: 't1', expiresAt, at: at1 } });
  t.equal(events.length, 2);
});

t.test('a breakout not yet reached waits pending', async (t) => {
  t.match(
    given([])
      .when(request({ entry: { kind: 'breakout', direction: 'above', price: pb(usd(50_500)) } }))
      .events()[1],
    { type: 'EntryPending' },
  );
});

t.test('a breakout the market has already passed is a market order, filled at the mark', async (t) => {
  const breakout = { kind: 'breakout' as const, direction: 'above' as const, price: pb(usd(49_800)) };
  t.match(
    given([])
      .when(request({ entry: breakout }))
      .events()[1],
    { type: 'TradeFilled', data: { price: pt(usd(50_000)) } },
  );
});

t.test('a long with its stop at or above the entry is refused INVALID_LEVELS', async (t) => {
  given([])
    .when(request({ stopLoss: pb(usd(50_000)) }))
    .thenRefused(t, 'INVALID_LEVELS', /stop/);
  given([])
    .when(request({ stopLoss: pb(usd(51_000)) }))
    .thenRefused(t, 'INVALID_LEVELS');
});

t.test('a long with a target at or below the entry is refused INVALID_LEVELS', async (t) => {
  given([])
    .when(request({ takeProfits: [{ price: pb(usd(49_000)) }] }))
    .thenRefused(t, 'INVALID_LEVELS', /target/);
});

t.test('a short mirrors the levels: stop above, targets below', async (t) => {
  const short = { side: 'short' as const, stopLoss: pb(usd(52_000)), takeProfits: [{ price: pb(usd(48_000)) }, { price: pb(usd(46_000)) }] };
  t.match(given([]).when(request(short)).events()[1], { type: 'TradeFilled' });
  given([])
    .when(request({ ...short, stopLoss: pb(usd(49_000)) }))
    .thenRefused(t, 'INVALID_LEVELS');
  given([])
    .when(request({ ...short, takeProfits: [{ price: pb(usd(51_000)) }] }))
    .thenRefused(t, 'INVALID_LEVELS');
});

t.test('targets out of order are refused INVALID_LEVELS', async (t) => {
  given([])
    .when(request({ takeProfits: [{ price: pb(usd(54_000)) }, { price: pb(usd(52_000)) }] }))
    .thenRefused(t, 'INVALID_LEVELS', /further/);
});

t.test("a pending zone's stop must lie below every price it may fill at, slippage included", async (t) => {
  // The zone 49,000-49,500 may fill down to 48,755 (50 bps below 49,000).
  given([])
    .when(request({ entry: zone(49_000, 49_500), stopLoss: pb(usd(48_800)) }))
    .thenRefused(t, 'INVALID_LEVELS');
  t.match(
    given([])
      .when(request({ entry: zone(49_000, 49_500), stopLoss: pb(usd(48_700)) }))
      .events()[1],
    { type: 'EntryPending' },
  );
});

t.test('targets without percents split the size evenly, the last absorbing the remainder', async (t) => {
  const three = [{ price: pb(usd(51_000)) }, { price: pb(usd(52_000)) }, { price: pb(usd(53_000)) }];
  t.match(
    given([])
      .when(request({ takeProfits: three }))
      .events()[0],
    {
      data: {
        targets: [
          { closeBps: 3333, closesRest: false },
          { closeBps: 3333, closesRest: false },
          { closeBps: 3334, closesRest: true },
        ],
      },
    },
  );
});

t.test('targets without percents share what the given percents leave', async (t) => {
  const mixed = [{ price: pb(usd(51_000)), closePercent: 50 }, { price: pb(usd(52_000)) }, { price: pb(usd(53_000)) }];
  t.match(
    given([])
      .when(request({ takeProfits: mixed }))
      .events()[0],
    {
      data: { targets: [{ closeBps: 5000 }, { closeBps: 2500 }, { closeBps: 2500, closesRest: true }] },
    },
  );
});

t.test('a final target whose percents leave part of the size keeps a runner', async (t) => {
  const runner = [
    { price: pb(usd(51_000)), closePercent: 30 },
    { price: pb(usd(52_000)), closePercent: 30.5 },
  ];
  t.match(
    given([])
      .when(request({ takeProfits: runner }))
      .events()[0],
    {
      data: {
        targets: [
          { closeBps: 3000, closesRest: false },
          { closeBps: 3050, closesRest: false },
        ],
      },
    },
  );
});

t.test('percents above 100 in total, or with more than 2 decimals, are refused', async (t) => {
  const over = [
    { price: pb(usd(51_000)), closePercent: 60 },
    { price: pb(usd(52_000)), closePercent: 50 },
  ];
  given([])
    .when(request({ takeProfits: over }))
    .thenRefused(t, 'VALIDATION_FAILED', /add up/);
  given([])
    .when(request({ takeProfits: [{ price: pb(usd(51_000)), closePercent: 12.345 }] }))
    .thenRefused(t, 'VALIDATION_FAILED', /2 decimals/);
});

t.test('trailing percents are kept as basis points', async (t) => {
  const trailing = { activationPercent: 2.5, callbackPercent: 1 };
  t.match(given([]).when(request({ trailing })).events()[0], { data: { trailing: { activationBps: 250, callbackBps: 100 } } });
});

t.test('breakevenOnTarget must name a tier the trade has', async (t) => {
  given([])
    .when(request({ breakevenOnTarget: 3 }))
    .thenRefused(t, 'VALIDATION_FAILED', /tier/);
});

t.test('an expiry at or before the request is refused', async (t) => {
  given([])
    .when(request({ expiresAt: '2025-03-01T11:00:00.000Z' }))
    .thenRefused(t, 'VALIDATION_FAILED', /expiresAt/);
});

t.test('a notional that buys less than one base unit is refused', async (t) => {
  given([])
    .when(request({ notionalMicro: 1, decimals: 0 }))
    .thenRefused(t, 'VALIDATION_FAILED', /base unit/);
});

t.test('malformed fields are refused VALIDATION_FAILED naming them', async (t) => {
  given([])
    .when(request({ leverage: 0 }))
    .thenRefused(t, 'VALIDATION_FAILED', /leverage/);
  given([])
    .when(request({ markPrice: 0n }))
    .thenRefused(t, 'VALIDATION_FAILED', /markPrice/);
});

t.test('a second request with the same tradeId changes nothing', async (t) => {
  given(history(request()))
    .when(request({ side: 'short', stopLoss: pb(usd(60_000)) }))
    .then(t, []);
});

t.test('a rejected request spends the id: a later request of it changes nothing, and a request decided first stands', async (t) => {
  const reject = (tradeId = 't1'): TradeCommand => ({
    type: 'RejectTrade',
    data: { tradeId, reason: 'INVALID_LEVELS', message: 'the mark is past the stop' },
    metadata: at(now),
  });
  const rejected = given([]).when(reject());
  rejected.then(t, [{ type: 'TradeRejected', data: { tradeId: 't1', reason: 'INVALID_LEVELS', message: 'the mark is past the stop', at: now.toISOString() } }]);
  t.match(rejected.after(), { status: 'rejected', tradeId: 't1', reason: 'INVALID_LEVELS' });
  given(rejected.events()).when(request()).then(t, [], 'the id is spent');
  given(rejected.events()).when(reject()).then(t, [], 'a repeated rejection changes nothing');
  given(history(request())).when(reject()).then(t, [], 'a trade requested first is not rejected');
  given(rejected.events()).when(mark(50_000)).thenRefused(t, 'TRADE_CLOSED');
});
