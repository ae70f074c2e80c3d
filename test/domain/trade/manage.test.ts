import t from 'tap';
import { tradeDecider, unrealizedPnlMicro } from '../../../domain/trade/decide.ts';
import { scenario } from '../../support/given-when-then.ts';
import { at2, cancel, close, history, mark, moveStop, request, setTargets, settled, pb, pt, usd } from './fixtures.ts';

const { given } = scenario(tradeDecider);
const open = history(request());
const pending = history(request({ entry: { kind: 'zone', low: pb(usd(49_000)), high: pb(usd(49_500)) } }));
const closed = history(request(), mark(47_000));

t.test('a tighter stop moves; a looser one is a no-op, not an error', async (t) => {
  given(open)
    .when(moveStop({ price: pb(usd(49_000)) }))
    .then(t, [{ type: 'StopMoved', data: { tradeId: 't1', stop: pt(usd(49_000)), kind: 'STOP_LOSS', at: at2 } }]);
  given(open)
    .when(moveStop({ price: pb(usd(47_000)) }))
    .then(t, []);
  given(open)
    .when(moveStop({ price: pb(usd(48_000)) }))
    .then(t, [], 'the same stop again');
});

t.test('a trade without a stop takes any stop', async (t) => {
  const events = given(history(request({ stopLoss: undefined })))
    .when(moveStop({ price: pb(usd(40_000)) }))
    .events();
  t.match(events, [{ type: 'StopMoved', data: { stop: pt(usd(40_000)) } }]);
});

t.test('breakeven is the average fill plus the round-trip fees per unit, rounded up for a long', async (t) => {
  given(open)
    .when(moveStop({ to: 'breakeven' }))
    .then(t, [{ type: 'StopMoved', data: { tradeId: 't1', stop: '50100.100100100100100101', kind: 'BREAKEVEN', at: at2 } }]);
});

t.test('breakeven of a short is the fill minus the round-trip fees, rounded down', async (t) => {
  const short = history(request({ side: 'short', stopLoss: pb(usd(52_000)), takeProfits: [{ price: pb(usd(48_000)) }] }));
  // 50,000 × (1 − 0.001) / (1 + 0.001) = 49,900.0999000…
  t.match(
    given(short)
      .when(moveStop({ to: 'breakeven' }))
      .events(),
    [{ data: { stop: '49900.0999000999000999', kind: 'BREAKEVEN' } }],
  );
});

t.test('a stop closed at breakeven loses at most the rounding of a micro-USD', async (t) => {
  const events = given(history(request(), moveStop({ to: 'breakeven' })))
    .when(mark(50_100.1001))
    .events();
  t.match(events, [{ type: 'TradeClosed', data: { reason: 'BREAKEVEN_STOP' } }]);
  const pnl = (events[0]!.data as { realizedPnlMicro: number }).realizedPnlMicro;
  t.ok(pnl >= -2 && pnl <= 2, `${pnl} is breakeven`);
});

t.test('breakeven before the entry filled is refused TRADE_NOT_FILLED', async (t) => {
  given(pending)
    .when(moveStop({ to: 'breakeven' }))
    .thenRefused(t, 'TRADE_NOT_FILLED');
});

t.test("a pending entry's stop may tighten only while it stays below every fill price", async (t) => {
  given(pending)
    .when(moveStop({ price: pb(usd(48_700)) }))
    .then(t, [{ type: 'StopMoved', data: { tradeId: 't1', stop: pt(usd(48_700)), kind: 'STOP_LOSS', at: at2 } }]);
  given(pending)
    .when(moveStop({ price: pb(usd(49_100)) }))
    .thenRefused(t, 'INVALID_LEVELS');
});

t.test('new targets replace the remaining ones, numbered after the tiers hit, sharing what remains', async (t) => {
  const afterTp1 = history(request(), mark(52_500));
  given(afterTp1)
    .when(setTargets([{ price: pb(usd(55_000)) }, { price: pb(usd(56_000)) }]))
    .then(t, [
      {
        type: 'TargetsSet',
        data: {
          tradeId: 't1',
          targets: [
            { tier: 2, price: pt(usd(55_000)), closeBps: 2500, closesRest: false },
            { tier: 3, price: pt(usd(56_000)), closeBps: 2500, closesRest: true },
          ],
          at: at2,
        },
      },
    ]);
});

t.test('new targets are validated as at the request, from the average fill', async (t) => {
  given(open)
    .when(setTargets([{ price: pb(usd(49_000)) }]))
    .thenRefused(t, 'INVALID_LEVELS');
  given(open)
    .when(setTargets([{ price: pb(usd(53_000)) }, { price: pb(usd(52_500)) }]))
    .thenRefused(t, 'INVALID_LEVELS');
  given(history(request(), mark(52_500)))
    .when(setTargets([{ price: pb(usd(55_000)), closePercent: 60 }]))
    .thenRefused(t, 'VALIDATION_FAILED', /add up/);
});

t.test('the same targets again change nothing; an empty list removes them', async (t) => {
  given(open)
    .when(setTargets([{ price: pb(usd(52_000)) }, { price: pb(usd(54_000)) }]))
    .then(t, []);
  t.match(given(open).when(setTargets([])).events(), [{ type: 'TargetsSet', data: { targets: [] } }]);
});

t.test('cancel removes an unfilled entry', async (t) => {
  const cancelling = given(pending).when(cancel());
  cancelling.then(t, [{ type: 'EntryCancelled', data: { tradeId: 't1', at: at2 } }, settled(0, at2)]);
  t.equal(cancelling.after().status, 'cancelled');
});

t.test('cancel keeps a filled position with its stop and targets', async (t) => {
  given(open).when(cancel()).then(t, []);
});

t.test('cancel repeated on a cancelled or expired trade changes nothing', async (t) => {
  given(history(...[request({ entry: { kind: 'zone', low: pb(usd(49_000)), high: pb(usd(49_500)) } }), cancel()]))
    .when(cancel())
    .then(t, []);
});

t.test('a partial close takes a percent of the original size at the venue price, net of fees', async (t) => {
  given(open)
    .when(close(25, 51_000, 'SIGNAL'))
    .then(t, [
      // 0.005 BTC: +5 USD, fee 0.255, a quarter of the entry fee 0.25
      {
        type: 'TradeReduced',
        data: {
          tradeId: 't1',
          price: pt(usd(51_000)),
          closedUnits: '500000',
          feeMicro: 255_000,
          realizedPnlMicro: 4_495_000,
          remainingUnits: '1500000',
          at: at2,
          reason: 'SIGNAL',
        },
      },
    ]);
});

t.test('a close is capped at what remains; 100 closes everything', async (t) => {
  const afterHalf = history(request(), close(50, 51_000));
  t.match(given(afterHalf).when(close(75, 51_000)).events(), [{ type: 'TradeClosed', data: { closedUnits: '1000000', reason: 'USER' } }]);
  t.match(
    given(open)
      .when(close(100, 49_000, 'AGENT_DELETED'))
      .events(),
    [{ type: 'TradeClosed', data: { closedUnits: '2000000', reason: 'AGENT_DELETED', remainingUnits: '0' } }],
  );
});

t.test('realized PnL of the closes adds up to the total the pool realizes', async (t) => {
  const events = history(request(), close(30, 51_000), close(30, 49_000), close(100, 50_500));
  const exits = events.filter((e) => e.type === 'TradeReduced' || e.type === 'TradeClosed');
  const sum = exits.reduce((s, e) => s + (e.data as { realizedPnlMicro: number }).realizedPnlMicro, 0);
  t.match(events.at(-2), { type: 'TradeClosed', data: { totalRealizedPnlMicro: sum } });
  t.same(events.at(-1), settled(sum, at2));
});

t.test('a close of an unfilled entry cancels it: there is nothing to sell', async (t) => {
  given(pending)
    .when(close(100, 50_000))
    .then(t, [{ type: 'EntryCancelled', data: { tradeId: 't1', at: at2 } }, settled(0, at2)]);
});

t.test('a close repeated on a closed trade changes nothing', async (t) => {
  given(closed).when(close(100, 50_000)).then(t, []);
  given(closed).when(cancel()).then(t, []);
});

t.test('a closed trade refuses stop moves and new targets with TRADE_CLOSED', async (t) => {
  given(closed)
    .when(moveStop({ price: pb(usd(49_000)) }))
    .thenRefused(t, 'TRADE_CLOSED');
  given(closed)
    .when(setTargets([{ price: pb(usd(60_000)) }]))
    .thenRefused(t, 'TRADE_CLOSED');
  given(history(request({ entry: { kind: 'zone', low: pb(usd(49_000)), high: pb(usd(49_500)) } }), cancel()))
    .when(moveStop({ price: pb(usd(1)) }))
    .thenRefused(t, 'TRADE_CLOSED');
});

t.test('commands for a trade never requested are refused TRADE_NOT_FOUND', async (t) => {
  given([])
    .when(moveStop({ price: pb(usd(1)) }))
    .thenRefused(t, 'TRADE_NOT_FOUND');
  given([]).when(close(100, 50_000)).thenRefused(t, 'TRADE_NOT_FOUND');
  given([]).when(cancel()).thenRefused(t, 'TRADE_NOT_FOUND');
});

t.test('unrealizedPnlMicro: the PnL of what remains at a price, net of the entry fee it carries; 0 unless open', async (t) => {
  t.equal(unrealizedPnlMicro(given(open).state, pb(usd(51_000))), usd(20) - usd(1));
  t.equal(unrealizedPnlMicro(given(open).state, pb(usd(49_000))), -usd(20) - usd(1));
  t.equal(unrealizedPnlMicro(given(pending).state, pb(usd(51_000))), 0);
  t.equal(unrealizedPnlMicro(given(closed).state, pb(usd(51_000))), 0);
});

t.test('the trade lives in the stream trade-{tradeId}', async (t) => {
  t.equal(tradeDecider.streamOf('t1'), 'trade-t1');
});
