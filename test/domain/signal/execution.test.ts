// How an open intent becomes a trade request in one pool (domain/signal/execution.ts): side and
// leverage on each venue, entries, sizes, slippage, the agent's default levels, expiry.
import t from 'tap';
import type { SignalExecutionDefaults } from '../../../domain/agent/record.ts';
import type { OpenIntent } from '../../../domain/signal/intent.ts';
import { DEFAULT_SIZE_PERCENT, tradeOrderOf, type ExecutionContext } from '../../../domain/signal/execution.ts';
import { terms } from '../pool/fixtures.ts';

/** A price's text; the mark as a bigint of attodollars. */
const usd = (n: number) => String(n);
const mark = (n: number) => BigInt(n) * 10n ** 18n;
const now = new Date('2025-05-01T10:00:00.000Z');
const perp = { ...terms, venue: 'PERP_VENUE' as const, maxLeverage: 10, recommendedPerTradePercent: 0 };
const ctx = (over: Partial<ExecutionContext> = {}): ExecutionContext => ({ defaults: undefined, terms: perp, feeBps: 5, now, markPrice: mark(100), ...over });
const open = (over: Partial<OpenIntent> = {}): OpenIntent => ({
  action: 'open',
  token: 'SOL',
  side: 'long',
  entry: { type: 'market' },
  takeProfits: [],
  ...over,
});
const order = (intent: OpenIntent, c = ctx()) => {
  const result = tradeOrderOf(intent, c);
  if (!result.ok) throw new Error(result.message);
  return result;
};

t.test('sides and leverage: a spot venue buys at 1x and never shorts; a perp venue caps leverage at the terms and the agent', async (t) => {
  const spot = ctx({ terms: { ...perp, venue: 'SPOT_VENUE', maxLeverage: 1 } });
  t.match(order(open({ side: 'long', leverage: 5 }), spot).request, { side: 'buy', leverage: 1 });
  t.match(tradeOrderOf(open({ side: 'short' }), spot), { ok: false, skipReason: 'UNSUPPORTED_SIDE' });
  t.match(tradeOrderOf(open({ side: 'sell' }), spot), { ok: false, skipReason: 'UNSUPPORTED_SIDE' });
  t.match(order(open({ side: 'sell', leverage: 3 })).request, { side: 'short', leverage: 3 });
  t.match(order(open({ side: 'buy' })).request, { side: 'long', leverage: 1 }, 'no leverage given: 1x');
  t.equal(order(open({ leverage: 25 })).request.leverage, 10, 'capped at the terms');
  t.equal(order(open({ leverage: 25 }), ctx({ defaults: { leverageMax: 4 } })).request.leverage, 4, 'capped at the agent');
  t.equal(order(open({ leverage: 7.9 })).request.leverage, 7, 'whole leverage, rounded down');
});

t.test('entries, slippage, trailing and expiry', async (t) => {
  t.same(order(open({ entry: { type: 'zone', low: usd(95), high: usd(98) } })).request.entry, { kind: 'zone', low: usd(95), high: usd(98) });
  t.same(order(open({ entry: { type: 'breakout', direction: 'above', price: usd(105) } })).request.entry, {
    kind: 'breakout',
    direction: 'above',
    price: usd(105),
  });
  const plain = order(open()).request;
  t.match(plain, { entry: { kind: 'market' }, slippageBps: 50, feeBps: 5, expiresAt: '2025-05-02T10:00:00.000Z', decimals: 9 });
  t.notOk(plain.trailing);
  const tuned = order(open(), ctx({ defaults: { slippageTolerance: 1.25, trailingStop: true } })).request;
  t.match(tuned, { slippageBps: 125, trailing: { activationPercent: 1, callbackPercent: 0.5 } });
});

t.test("sizes: the signal's USD margin or percent, else the agent's tradeSizeValue, else its recommended percent, else 10%", async (t) => {
  t.same(order(open({ size: { type: 'usd', amountMicro: 40_000_000 } })).size, { marginMicro: 40_000_000 });
  t.same(order(open({ size: { type: 'percent', percent: 15 } })).size, { percent: 15 });
  t.same(order(open(), ctx({ defaults: { tradeSizeValue: 7.5 } })).size, { percent: 7.5 });
  t.same(order(open(), ctx({ terms: { ...perp, recommendedPerTradePercent: 12 } })).size, { percent: 12 });
  t.same(order(open()).size, { percent: DEFAULT_SIZE_PERCENT });
});

t.test("targets: the signal's percents, else the agent's tiers when they match one to one, else an even split", async (t) => {
  const two = [{ price: usd(110) }, { price: usd(120) }];
  const tiers: SignalExecutionDefaults = {
    takeProfitTiers: [
      { closePercent: 70, whenPositionPercent: 5 },
      { closePercent: 30, whenPositionPercent: 10 },
    ],
  };
  t.same(order(open({ takeProfits: two }), ctx({ defaults: tiers })).request.takeProfits, [
    { price: usd(110), closePercent: 70 },
    { price: usd(120), closePercent: 30 },
  ]);
  t.same(order(open({ takeProfits: [{ price: usd(110), closePercent: 50 }, { price: usd(120) }] }), ctx({ defaults: tiers })).request.takeProfits, [
    { price: usd(110), closePercent: 50 },
    { price: usd(120) },
  ]);
  t.same(order(open({ takeProfits: two })).request.takeProfits, [{ price: usd(110) }, { price: usd(120) }]);
});

t.test('default levels: a stop and targets the signal lacks come from the agent, measured from where the trade enters', async (t) => {
  const defaults: SignalExecutionDefaults = { stopLossMode: 'PERCENT', stopLossValue: 5, takeProfitMode: 'percent', takeProfitValue: 10 };
  t.match(order(open(), ctx({ defaults })).request, { stopLoss: usd(95), takeProfits: [{ price: usd(110) }] }, 'a long at the 100 USD mark');
  t.match(order(open({ side: 'short' }), ctx({ defaults })).request, { stopLoss: usd(105), takeProfits: [{ price: usd(90) }] }, 'a short mirrors');
  t.match(
    order(open({ entry: { type: 'zone', low: usd(90), high: usd(110) } }), ctx({ defaults, markPrice: null })).request,
    { stopLoss: usd(95) },
    'a zone measures from its middle',
  );
  t.notOk(order(open(), ctx({ defaults, markPrice: null })).request.stopLoss, 'a market entry without a price has no reference');
  t.match(order(open({ stopLoss: usd(97) }), ctx({ defaults })).request, { stopLoss: usd(97) }, "the signal's stop wins");
  t.match(
    order(open({ stopLoss: usd(97) }), ctx({ defaults: { ...defaults, signalOverridesDefaults: false } })).request,
    { stopLoss: usd(95) },
    'unless the agent puts its own first',
  );
  const tiers: SignalExecutionDefaults = {
    takeProfitTiers: [
      { closePercent: 50, whenPositionPercent: 4 },
      { closePercent: 50, whenPositionPercent: 8 },
    ],
  };
  t.same(
    order(open(), ctx({ defaults: tiers })).request.takeProfits,
    [
      { price: usd(104), closePercent: 50 },
      { price: usd(108), closePercent: 50 },
    ],
    'tiers at their move from the entry',
  );
  t.notOk(order(open(), ctx({ defaults: { stopLossMode: 'none', stopLossValue: 5 } })).request.stopLoss, 'mode none: no default stop');
});
