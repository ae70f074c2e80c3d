import t from 'tap';
import { tradeDecider } from '../../../domain/trade/decide.ts';
import type { TradeEvent } from '../../../domain/trade/events.ts';
import { scenario } from '../../support/given-when-then.ts';
import { afterExpiry, at2, history, mark, moveStop, request, settled, pb, pt, usd } from './fixtures.ts';

const { given } = scenario(tradeDecider);
const open = history(request());
const pendingZone = history(request({ entry: { kind: 'zone', low: pb(usd(49_000)), high: pb(usd(49_500)) } }));
const types = (events: TradeEvent[]) => events.map((e) => e.type);

t.test('a pending zone fills when the price enters it, at that price, and is marked', async (t) => {
  const events = given(pendingZone).when(mark(49_200)).events();
  t.same(types(events), ['TradeFilled', 'TradeMarked']);
  t.match(events[0], { data: { price: pt(usd(49_200)), sizeUnits: '2032520' } });
});

t.test('a pending breakout fills at its trigger even when the tick gaps past it', async (t) => {
  const events = given(history(request({ entry: { kind: 'breakout', direction: 'above', price: pb(usd(50_500)) } })))
    .when(mark(51_000))
    .events();
  t.match(events[0], { type: 'TradeFilled', data: { price: pt(usd(50_500)), sizeUnits: '1980198' } });
});

t.test('a pending entry the price does not reach waits', async (t) => {
  given(pendingZone).when(mark(50_500)).then(t, []);
});

t.test('a pending entry past expiresAt expires, even on a tick that reaches it', async (t) => {
  const expiring = given(pendingZone).when(mark(49_200, afterExpiry));
  expiring.then(t, [{ type: 'EntryExpired', data: { tradeId: 't1', at: afterExpiry.toISOString() } }, settled(0, afterExpiry.toISOString())]);
  t.equal(expiring.after().status, 'expired');
});

t.test('the stop crossed closes everything at the tick price, net of both fees, and releases the margin', async (t) => {
  const stopped = given(open).when(mark(47_000));
  stopped.then(t, [
    {
      type: 'TradeClosed',
      data: {
        tradeId: 't1',
        price: pt(usd(47_000)),
        closedUnits: '2000000',
        feeMicro: 940_000,
        realizedPnlMicro: -61_940_000,
        remainingUnits: '0',
        at: at2,
        reason: 'STOP_LOSS',
        tier: null,
        totalRealizedPnlMicro: -61_940_000,
      },
    },
    settled(-61_940_000, at2),
  ]);
  t.match(stopped.after(), {
    status: 'closed',
    marginMicro: 0,
    remainingUnits: 0n,
    realizedPnlMicro: -61_940_000,
    feesPaidMicro: 1_940_000,
    entryFeeOpenMicro: 0,
  });
});

t.test('a target reached closes its tier at the target price, with its share of the entry fee', async (t) => {
  given(open)
    .when(mark(52_500))
    .then(t, [
      {
        type: 'TargetHit',
        data: {
          tradeId: 't1',
          price: pt(usd(52_000)),
          closedUnits: '1000000',
          feeMicro: 520_000,
          realizedPnlMicro: 18_980_000,
          remainingUnits: '1000000',
          at: at2,
          tier: 1,
        },
      },
      { type: 'TradeMarked', data: { tradeId: 't1', price: pt(usd(52_500)), unrealizedPnlMicro: 24_500_000, at: at2 } },
    ]);
});

t.test('a tick past two targets closes both tiers; the last one closes the rest as TAKE_PROFIT', async (t) => {
  const both = given(open).when(mark(55_000));
  const events = both.events();
  t.same(types(events), ['TargetHit', 'TradeClosed', 'TradeSettled']);
  t.same(events[2], settled(57_940_000, at2), "the pool gets back the margin and both tiers' PnL");
  t.match(events[1], {
    data: { price: pt(usd(54_000)), closedUnits: '1000000', realizedPnlMicro: 38_960_000, reason: 'TAKE_PROFIT', tier: 2, totalRealizedPnlMicro: 57_940_000 },
  });
  t.match(both.after(), { status: 'closed', targets: [], realizedPnlMicro: 57_940_000 });
});

t.test('targets whose percents leave part of the size keep a runner open after the last one', async (t) => {
  const runner = history(
    request({
      takeProfits: [
        { price: pb(usd(52_000)), closePercent: 25 },
        { price: pb(usd(54_000)), closePercent: 25 },
      ],
    }),
  );
  const after = given(runner).when(mark(55_000)).after();
  t.match(after, { status: 'open', remainingUnits: 1_000_000n, targets: [] });
});

t.test('breakevenOnTarget moves the stop to the fill plus the round-trip fees after that tier', async (t) => {
  const events = given(history(request({ breakevenOnTarget: 1 })))
    .when(mark(52_500))
    .events();
  t.same(types(events), ['TargetHit', 'StopMoved', 'TradeMarked']);
  // 50,000 × (1 + 0.001) / (1 − 0.001) = 50,100.1001001… rounded up
  t.same(events[1], { type: 'StopMoved', data: { tradeId: 't1', stop: '50100.100100100100100101', kind: 'BREAKEVEN', at: at2 } });
});

t.test('a breakeven stop crossed closes with BREAKEVEN_STOP', async (t) => {
  const events = given(history(request({ breakevenOnTarget: 1 }), mark(52_500)))
    .when(mark(50_050))
    .events();
  t.match(events, [{ type: 'TradeClosed', data: { reason: 'BREAKEVEN_STOP', price: pt(usd(50_050)) } }]);
});

const trailing = request({ takeProfits: [], trailing: { activationPercent: 2, callbackPercent: 1 } });

t.test('a trailing stop is not armed before the favourable move reaches the activation', async (t) => {
  t.same(types(given(history(trailing)).when(mark(50_900)).events()), ['TradeMarked']);
});

t.test('a trailing stop armed at the activation moves the stop a callback behind the price', async (t) => {
  const events = given(history(trailing)).when(mark(51_000)).events();
  t.same(events.slice(0, 2), [
    { type: 'TrailingArmed', data: { tradeId: 't1', price: pt(usd(51_000)), at: at2 } },
    { type: 'StopMoved', data: { tradeId: 't1', stop: pt(usd(50_490)), kind: 'TRAILING', at: at2 } },
  ]);
});

t.test('an armed trailing stop follows new best prices and holds on a pullback', async (t) => {
  const armed = history(trailing, mark(51_000));
  t.match(given(armed).when(mark(52_000)).events(), [{ type: 'StopMoved', data: { stop: pt(usd(51_480)), kind: 'TRAILING' } }, { type: 'TradeMarked' }]);
  t.same(
    types(
      given(history(trailing, mark(51_000), mark(52_000)))
        .when(mark(51_700))
        .events(),
    ),
    ['TradeMarked'],
  );
});

t.test('a trailing stop crossed closes with TRAILING_STOP', async (t) => {
  const events = given(history(trailing, mark(51_000), mark(52_000)))
    .when(mark(51_400))
    .events();
  t.match(events, [{ type: 'TradeClosed', data: { reason: 'TRAILING_STOP', price: pt(usd(51_400)) } }]);
});

t.test('a tick beyond both the stop and a target applies the stop first and closes everything', async (t) => {
  const events = given(history(request(), moveStop({ price: pb(usd(53_000)) })))
    .when(mark(52_500))
    .events();
  t.match(events, [{ type: 'TradeClosed', data: { reason: 'STOP_LOSS', price: pt(usd(52_500)), closedUnits: '2000000' } }]);
  t.same(types(events), ['TradeClosed', 'TradeSettled']);
});

t.test('the unrealized PnL is marked only when it changed', async (t) => {
  given(open)
    .when(mark(50_000))
    .then(t, [{ type: 'TradeMarked', data: { tradeId: 't1', price: pt(usd(50_000)), unrealizedPnlMicro: -1_000_000, at: at2 } }]);
  given(history(request(), mark(50_000)))
    .when(mark(50_000))
    .then(t, []);
});

t.test('a short is stopped when the price rises to its stop, and loses on the rise', async (t) => {
  const short = history(request({ side: 'short', stopLoss: pb(usd(52_000)), takeProfits: [{ price: pb(usd(48_000)) }] }));
  t.match(given(short).when(mark(53_000)).events(), [
    { type: 'TradeClosed', data: { reason: 'STOP_LOSS', realizedPnlMicro: -(60_000_000 + 1_060_000 + 1_000_000) } },
  ]);
  t.match(given(short).when(mark(47_000)).events(), [{ type: 'TradeClosed', data: { reason: 'TAKE_PROFIT', price: pt(usd(48_000)) } }]);
});

t.test('a gap far through the stop loses at most the margin: the venue liquidates first', async (t) => {
  const events = given(history(request({ leverage: 10 })))
    .when(mark(20_000))
    .events();
  t.match(events, [{ type: 'TradeClosed', data: { realizedPnlMicro: -usd(100), totalRealizedPnlMicro: -usd(100) } }]);
});

t.test('a tick for a closed trade is refused TRADE_CLOSED; for no trade TRADE_NOT_FOUND', async (t) => {
  given(history(request(), mark(47_000)))
    .when(mark(50_000))
    .thenRefused(t, 'TRADE_CLOSED');
  given([]).when(mark(50_000)).thenRefused(t, 'TRADE_NOT_FOUND');
});
