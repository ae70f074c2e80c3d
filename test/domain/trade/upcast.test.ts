// Events stored before prices were finer than a micro-USD: read as they meant, never rewritten.
// Trade events, a transfer plan's trade request and a signal's interpretation each held integer
// micro-USD prices; folded or parsed today they give the same prices as decimal text / bigints.
import t from 'tap';
import { signalDecider } from '../../../domain/signal/decide.ts';
import { signalEventSchema } from '../../../domain/signal/events.ts';
import { requestOfStored } from '../../../domain/trade/commands.ts';
import { tradeEventSchema, upcastTradeEvent, type TradeEvent } from '../../../domain/trade/events.ts';
import { evolve, initialState } from '../../../domain/trade/state.ts';

const at = '2025-03-01T12:00:00.000Z';
const legacy = [
  {
    type: 'TradeRequested',
    data: {
      tradeId: 't1',
      poolId: 'u1.a1.virtual',
      token: 'PEPE',
      decimals: 9,
      side: 'long',
      leverage: 2,
      notionalMicro: 100_000_000,
      entry: { kind: 'zone', lowMicro: 11, highMicro: 12 },
      stopLossMicro: 10,
      targets: [{ tier: 1, priceMicro: 15, closeBps: 10_000, closesRest: true }],
      trailing: null,
      breakevenOnTarget: null,
      slippageBps: 50,
      feeBps: 5,
      expiresAt: '2025-03-02T12:00:00.000Z',
      at,
    },
  },
  { type: 'TradeFilled', data: { tradeId: 't1', priceMicro: 12, sizeUnits: '8333333333333333', marginMicro: 50_000_000, feeMicro: 50_000, at } },
  { type: 'StopMoved', data: { tradeId: 't1', stopMicro: 11, kind: 'STOP_LOSS', at } },
  { type: 'TargetsSet', data: { tradeId: 't1', targets: [{ tier: 1, priceMicro: 16, closeBps: 10_000, closesRest: true }], at } },
  { type: 'TradeMarked', data: { tradeId: 't1', priceMicro: 13, unrealizedPnlMicro: 8_283_333, at } },
] as unknown as TradeEvent[];

t.test('old trade events parse and fold as the same prices: 12 micro-USD is 0.000012 USD', async (t) => {
  const parsed = legacy.map((e) => tradeEventSchema.parse(JSON.parse(JSON.stringify(e))));
  t.match(parsed[0], { data: { entry: { kind: 'zone', low: '0.000011', high: '0.000012' }, stopLoss: '0.00001', targets: [{ price: '0.000015' }] } });
  t.match(parsed[1], { data: { price: '0.000012' } });
  t.match(parsed[2], { data: { stop: '0.000011' } });
  t.match(parsed[3], { data: { targets: [{ price: '0.000016' }] } });
  const state = legacy.reduce(evolve, initialState());
  t.match(state, {
    status: 'open',
    entry: { kind: 'zone', low: 11_000_000_000_000n, high: 12_000_000_000_000n },
    averageFill: 12_000_000_000_000n,
    stop: { price: 11_000_000_000_000n, kind: 'STOP_LOSS' },
    targets: [{ price: 16_000_000_000_000n }],
  });
  t.equal(parsed.reduce(evolve, initialState()).status, 'open', 'the parsed events fold to the same trade');
  t.same(legacy.reduce(evolve, initialState()), parsed.reduce(evolve, initialState()));
  t.equal(upcastTradeEvent(parsed[1]!), parsed[1], 'a current event comes back as it is');
  t.equal((legacy[1]!.data as unknown as { priceMicro: number }).priceMicro, 12, 'the stored event is not rewritten');
});

t.test("an old transfer plan's trade request is read with its prices", async (t) => {
  const request = requestOfStored({
    token: 'BTC',
    decimals: 9,
    side: 'long',
    leverage: 2,
    entry: { kind: 'breakout', direction: 'above', priceMicro: 50_500_000_000 },
    stopLossMicro: 48_000_000_000,
    takeProfits: [{ priceMicro: 52_000_000_000, closePercent: 50 }, { priceMicro: 54_000_000_000 }],
    slippageBps: 50,
    feeBps: 5,
    expiresAt: '2025-03-02T12:00:00.000Z',
  });
  t.match(request, {
    entry: { kind: 'breakout', direction: 'above', price: 50_500n * 10n ** 18n },
    stopLoss: 48_000n * 10n ** 18n,
    takeProfits: [{ price: 52_000n * 10n ** 18n, closePercent: 50 }, { price: 54_000n * 10n ** 18n }],
  });
});

t.test("an old signal's interpretation reads its micro-USD prices as decimal text", async (t) => {
  const received = {
    type: 'SignalReceived',
    data: {
      agentId: 'a1',
      signalId: 's1',
      signalIdGiven: true,
      source: 'text',
      body: { text: 'BUY $PEPE 0.0000123 SL 0.0000110 TP 0.0000150' },
      receivedAt: at,
      interpretation: {
        kind: 'signal',
        ruleVersion: 'sp1-x',
        intents: [
          { action: 'open', token: 'PEPE', side: 'buy', entry: { type: 'zone', low: 12, high: 12 }, stopLoss: 11, takeProfits: [{ price: 15 }] },
          { action: 'update', token: 'PEPE', stopLoss: 13 },
        ],
      },
    },
  };
  const expected = [
    {
      action: 'open',
      token: 'PEPE',
      side: 'buy',
      entry: { type: 'zone', low: '0.000012', high: '0.000012' },
      stopLoss: '0.000011',
      takeProfits: [{ price: '0.000015' }],
    },
    { action: 'update', token: 'PEPE', stopLoss: '0.000013' },
  ];
  const parsed = signalEventSchema.parse(received);
  t.same(
    parsed.type === 'SignalReceived' && parsed.data.interpretation.kind === 'signal' && parsed.data.interpretation.intents,
    expected,
    'the projectors parse it upcast',
  );
  const state = signalDecider.evolve(signalDecider.initialState(), received as never);
  t.same(
    state.status === 'received' && state.received.interpretation.kind === 'signal' && state.received.interpretation.intents,
    expected,
    'the decider folds it upcast',
  );
});
