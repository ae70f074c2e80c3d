// Structured signals: docs/domain-rules.md's body and its additions read into the same interpretation as text;
// every refusal has a stable code, contradictory levels are INVALID_LEVELS.
import t from 'tap';
import { interpretSignalBody, parseStructuredSignal, STRUCTURED_VERSION, type StructuredResult } from '../../../domain/signal/index.ts';
import { above, market, open, px, tp, usd, zone } from './fixtures.ts';

const intents = (result: StructuredResult) => (result.ok ? result.interpretation.intents : result);
const codes = (result: StructuredResult) => (result.ok ? [] : [result.reason, ...result.problems.map((p) => `${p.code}@${p.path}`)]);
const long = { action: 'open', side: 'long', token: 'BTC' } as const;

t.test("docs/domain-rules.md's body opens, closes and cancels", async (t) => {
  const result = parseStructuredSignal({
    signalId: 's-1',
    ...long,
    leverage: 10,
    sizePercent: 5,
    entry: [67_500, 67_000],
    stopLoss: 66_000,
    takeProfit: [68_000, 69_000],
  });
  t.equal(result.ok && result.interpretation.ruleVersion, STRUCTURED_VERSION);
  t.strictSame(intents(result), [
    {
      ...open('BTC', 'long', zone(usd(67_000), usd(67_500)), { stopLoss: usd(66_000), takeProfits: [tp(usd(68_000)), tp(usd(69_000))], leverage: 10 }),
      size: { type: 'percent', percent: 5 },
    },
  ]);
  t.strictSame(intents(parseStructuredSignal({ action: 'open', side: 'sell', token: '#sol/usdt', entry: 150.25, sizeUsd: 250.5, takeProfit: 140 })), [
    { ...open('SOL', 'sell', zone(px('150.25')), { takeProfits: [tp(usd(140))] }), size: { type: 'usd', amountMicro: 250_500_000 } },
  ]);
  t.strictSame(intents(parseStructuredSignal({ action: 'open', side: 'buy', token: 'So11111111111111111111111111111111111111112' })), [
    open('So11111111111111111111111111111111111111112', 'buy', market()),
  ]);
  t.strictSame(intents(parseStructuredSignal({ action: 'close', token: 'BTC' })), [{ action: 'close', token: 'BTC', closePercent: 100 }]);
  t.strictSame(intents(parseStructuredSignal({ action: 'close_partial', token: 'BTC', side: 'long', closePercent: 30 })), [
    { action: 'close', token: 'BTC', side: 'long', closePercent: 30 },
  ]);
  t.strictSame(intents(parseStructuredSignal({ action: 'cancel', token: 'ETHUSDT' })), [{ action: 'cancel', token: 'ETH' }]);
});

t.test('the additions: breakout and market entries, tiers, updates', async (t) => {
  t.strictSame(intents(parseStructuredSignal({ ...long, entry: 68_450, entryType: 'above', stopLoss: 67_600 })), [
    open('BTC', 'long', above(usd(68_450)), { stopLoss: usd(67_600) }),
  ]);
  t.strictSame(intents(parseStructuredSignal({ ...long, entry: 67_000, entryType: 'market', stopLoss: 66_000 })), [
    open('BTC', 'long', market(usd(67_000)), { stopLoss: usd(66_000) }),
  ]);
  t.strictSame(intents(parseStructuredSignal({ ...long, takeProfit: [{ price: 68_000, closePercent: 30 }, 69_000, { price: 70_000 }] })), [
    open('BTC', 'long', market(), { takeProfits: [tp(usd(68_000), 30), tp(usd(69_000)), tp(usd(70_000))] }),
  ]);
  t.strictSame(intents(parseStructuredSignal({ action: 'update', token: 'BTC', breakeven: true })), [{ action: 'update', token: 'BTC', breakeven: true }]);
  t.strictSame(intents(parseStructuredSignal({ action: 'update', token: 'BTC', stopLoss: 66_500, takeProfit: 71_000 })), [
    { action: 'update', token: 'BTC', stopLoss: usd(66_500), takeProfits: [tp(usd(71_000))] },
  ]);
});

t.test('prices are exact (to 10^-18 USD) from the number as written, leverage capped by the defaults', async (t) => {
  t.strictSame(intents(parseStructuredSignal({ ...long, token: 'X', entry: 0.3, stopLoss: 0.1, takeProfit: 0.7 })), [
    open('X', 'long', zone(px('0.3')), { stopLoss: px('0.1'), takeProfits: [tp(px('0.7'))] }),
  ]);
  t.strictSame(
    intents(parseStructuredSignal({ ...long, token: 'PEPE', entry: 0.0000215 })),
    [open('PEPE', 'long', zone(px('0.0000215')))],
    'a memecoin keeps every digit',
  );
  t.strictSame(
    intents(parseStructuredSignal({ ...long, token: 'SHIB', entry: [0.0000112, 0.0000118], stopLoss: 1e-8 })),
    [open('SHIB', 'long', zone(px('0.0000112'), px('0.0000118')), { stopLoss: px('0.00000001') })],
    'a zone below a micro-USD stays a zone',
  );
  t.strictSame(intents(parseStructuredSignal({ ...long, leverage: 50 }, { leverageMax: 20 })), [open('BTC', 'long', market(), { leverage: 20 })]);
});

t.test('levels that contradict the side are refused as INVALID_LEVELS', async (t) => {
  t.strictSame(codes(parseStructuredSignal({ ...long, entry: 67_000, stopLoss: 67_000 })), ['INVALID_LEVELS', 'STOP_LOSS_NOT_BELOW_ENTRY@body']);
  t.strictSame(
    codes(parseStructuredSignal({ ...long, entry: [67_000, 67_500], stopLoss: 67_100 })),
    ['INVALID_LEVELS', 'STOP_LOSS_NOT_BELOW_ENTRY@body'],
    'a stop inside the zone',
  );
  t.strictSame(codes(parseStructuredSignal({ ...long, side: 'short', entry: 3_500, stopLoss: 3_400, takeProfit: [3_300, 3_600] })), [
    'INVALID_LEVELS',
    'STOP_LOSS_NOT_ABOVE_ENTRY@body',
    'TAKE_PROFIT_NOT_BELOW_ENTRY@body',
  ]);
  t.strictSame(codes(parseStructuredSignal({ ...long, stopLoss: 66_000, takeProfit: 65_000 })), ['INVALID_LEVELS', 'TAKE_PROFIT_NOT_ABOVE_STOP_LOSS@body']);
});

t.test('other refusals name their field with a stable code', async (t) => {
  const cases: Array<[Record<string, unknown>, string[]]> = [
    [{ ...long, leverage: 0.5 }, ['VALIDATION_FAILED', 'INVALID_FIELD@leverage']],
    [{ ...long, sizePercent: 0 }, ['VALIDATION_FAILED', 'INVALID_FIELD@sizePercent']],
    [{ action: 'close_partial', token: 'BTC', closePercent: 101 }, ['VALIDATION_FAILED', 'INVALID_FIELD@closePercent']],
    [{ ...long, stoploss: 66_000 }, ['VALIDATION_FAILED', 'INVALID_FIELD@body']],
    [{ ...long, entry: 'market' }, ['VALIDATION_FAILED', 'INVALID_FIELD@entry']],
    [{ ...long, entry: -1 }, ['VALIDATION_FAILED', 'INVALID_FIELD@entry']],
    [{ action: 'buy', token: 'BTC' }, ['VALIDATION_FAILED', 'INVALID_FIELD@action']],
    [{ action: 'open', token: 'BTC' }, ['VALIDATION_FAILED', 'SIDE_REQUIRED@side']],
    [{ ...long, sizePercent: 5, sizeUsd: 100 }, ['VALIDATION_FAILED', 'SIZE_CONFLICT@sizeUsd']],
    [{ ...long, closePercent: 50 }, ['VALIDATION_FAILED', 'FIELD_NOT_FOR_ACTION@closePercent']],
    [{ action: 'cancel', token: 'BTC', stopLoss: 1 }, ['VALIDATION_FAILED', 'FIELD_NOT_FOR_ACTION@stopLoss']],
    [{ ...long, token: '!!!' }, ['VALIDATION_FAILED', 'TOKEN_UNREADABLE@token']],
    [{ ...long, entry: [1, 2], entryType: 'above' }, ['VALIDATION_FAILED', 'ENTRY_TYPE_NEEDS_PRICE@entry']],
    [{ ...long, entryType: 'zone' }, ['VALIDATION_FAILED', 'ENTRY_TYPE_NEEDS_PRICE@entry']],
    [{ action: 'close_partial', token: 'BTC' }, ['VALIDATION_FAILED', 'CLOSE_PERCENT_REQUIRED@closePercent']],
    [{ action: 'update', token: 'BTC' }, ['VALIDATION_FAILED', 'UPDATE_EMPTY@action']],
    [{ action: 'update', token: 'BTC', stopLoss: 1, breakeven: true }, ['VALIDATION_FAILED', 'STOP_LOSS_AND_BREAKEVEN@breakeven']],
    [{ ...long, entry: 1e-19 }, ['VALIDATION_FAILED', 'PRICE_OUT_OF_RANGE@entry']],
  ];
  for (const [body, expected] of cases) t.strictSame(codes(parseStructuredSignal(body)), expected, JSON.stringify(body));
});

t.test('a webhook body is a text signal or a structured one; anything else is refused', async (t) => {
  const text = interpretSignalBody({ signalId: 'm-7', replyTo: 'm-1', text: 'close 50%' });
  t.strictSame(text.ok && { source: text.source, signalId: text.signalId, replyTo: text.replyTo, kind: text.interpretation.kind }, {
    source: 'text',
    signalId: 'm-7',
    replyTo: 'm-1',
    kind: 'signal',
  });
  const structured = interpretSignalBody({ signalId: 's-9', ...long });
  t.strictSame(structured.ok && [structured.source, structured.signalId], ['structured', 's-9']);
  const chatter = interpretSignalBody({ text: 'GM fam' });
  t.strictSame(chatter.ok && chatter.interpretation.kind, 'unmatched', 'chatter is kept, not refused');
  for (const body of [null, 'LONG BTC', [1], { text: 5 }, { text: 'x', stopLoss: 1 }, {}]) t.equal(interpretSignalBody(body).ok, false, JSON.stringify(body));
});
