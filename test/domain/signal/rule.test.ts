// The agent's signalDetectionRule and signalExecutionDefaults refine the built-in reading: extra
// keywords, the strategy prefix, token patterns (vetted when saved), the leverage cap, the version.
import t from 'tap';
import {
  compileSignalRule,
  parseSignalText,
  ruleProblems,
  ruleVersionOf,
  signalDetectionRuleInputSchema,
  type SignalDetectionRule,
} from '../../../domain/signal/index.ts';
import { comparable, m, market, open, signal, tp, unmatched, usd, zone } from './fixtures.ts';

const read = (text: string, rule?: SignalDetectionRule, leverageMax?: number) =>
  comparable(parseSignalText(text, rule, leverageMax === undefined ? undefined : { leverageMax }));
const btc = open('BTC', 'long', zone(usd(67_000)), { stopLoss: usd(66_000) });

t.test('with a strategy prefix only the messages carrying it are signals, in any case or place', async (t) => {
  const rule = { strategyPrefix: '[ALPHA]' };
  t.strictSame(read('LONG BTC 67000 SL 66000', rule), unmatched('NO_STRATEGY_PREFIX'));
  t.strictSame(read('[ALPHA] LONG BTC 67000 SL 66000', rule), signal(btc));
  t.strictSame(read('🅰️ [alpha]\nLONG BTC 67000 SL 66000', rule), signal(btc));
  t.strictSame(read('LONG BTC 67000 SL 66000 #scalp', { strategyPrefix: '#SCALP' }), signal(btc));
  t.strictSame(read('alphabet LONG BTC 67000 SL 66000', { strategyPrefix: 'alpha' }), unmatched('NO_STRATEGY_PREFIX'), 'not inside a word');
  t.strictSame(read('Swing  trade: LONG BTC 67000 SL 66000', { strategyPrefix: 'swing trade' }), signal(btc), 'any spacing');
});

t.test("the rule's keywords are added to the built-in ones of their family", async (t) => {
  const rule: SignalDetectionRule = {
    shortKeywords: ['fade'],
    longKeywords: ['send it'],
    entryZoneKeywords: ['load'],
    slKeywords: ['bail'],
    tpKeywords: ['🎯 goal'],
    leverageKeywords: ['mult'],
    cancelKeywords: ['abort'],
    partialCloseKeywords: ['trim'],
    breakevenKeywords: ['lock entry'],
    breakoutAboveKeywords: ['flips'],
    breakoutBelowKeywords: ['loses'],
    buyKeywords: ['ape'],
    sellKeywords: ['dump'],
  };
  t.strictSame(
    read('FADE $ETH load 3500 bail 3600 🎯 goal 3300 mult 3', rule),
    signal(open('ETH', 'short', zone(usd(3_500)), { stopLoss: usd(3_600), takeProfits: [tp(usd(3_300))], leverage: 3 })),
  );
  t.strictSame(
    read('Send it #BTC when it flips 68,000, bail 67,200', rule),
    signal(open('BTC', 'long', { type: 'breakout', direction: 'above', price: usd(68_000) }, { stopLoss: usd(67_200) })),
  );
  t.strictSame(
    read('dump $SOL if it loses 140, bail 146', rule),
    signal(open('SOL', 'sell', { type: 'breakout', direction: 'below', price: usd(140) }, { stopLoss: usd(146) })),
  );
  t.strictSame(read('ape $WIF now', rule), signal(open('WIF', 'buy', market())));
  t.strictSame(read('trim 30% $SOL', rule), signal({ action: 'close', token: 'SOL', closePercent: 30 }));
  t.strictSame(read('abort #BTC', rule), signal({ action: 'cancel', token: 'BTC' }));
  t.strictSame(read('TP1 hit, lock entry', rule), signal({ action: 'update', breakeven: true }));
  t.strictSame(read('LONG BTC 67000 SL 66000', rule), signal(btc), 'the built-in keywords still read');
  t.strictSame(read('trim 30% $SOL'), unmatched('NO_SIGNAL'), 'without the rule the word means nothing');
});

t.test("a rule's keyword wins over a built-in one of another family", async (t) => {
  t.strictSame(read('exit #BTC'), signal({ action: 'close', token: 'BTC', closePercent: 100 }));
  t.strictSame(read('exit #BTC', { cancelKeywords: ['exit'] }), signal({ action: 'cancel', token: 'BTC' }));
});

t.test('token patterns find tokens the built-in styles do not, through their capture group', async (t) => {
  const rule = { tokenPatterns: ['coin\\s*=\\s*([a-z0-9]+)', '🪙\\s?([A-Z]{2,10})'] };
  t.strictSame(read('coin = wif\nlong 2.35 sl 2.18', rule), signal(open('WIF', 'long', zone(m(2_350_000)), { stopLoss: m(2_180_000) })));
  t.strictSame(read('long 2.35 sl 2.18', rule), unmatched('MISSING_TOKEN'));
  t.strictSame(
    read('Pair:  jup\nDirection: short\nEntry 1.10 SL 1.16', { tokenPatterns: ['pair:\\s*([a-z]+)'] }),
    signal(open('JUP', 'short', zone(m(1_100_000)), { stopLoss: m(1_160_000) })),
  );
});

t.test('leverage is capped at signalExecutionDefaults.leverageMax, a range taking its lower bound first', async (t) => {
  t.strictSame(read('LONG BTC 67000 SL 66000 Lev 20x', undefined, 5), signal({ ...btc, leverage: 5 }));
  t.strictSame(read('LONG BTC 67000 SL 66000 Lev 3x', undefined, 5), signal({ ...btc, leverage: 3 }));
  t.strictSame(read('LONG BTC 67000 SL 66000 Cross 10x-20x', undefined, 12), signal({ ...btc, leverage: 10 }));
  t.strictSame(read('LONG BTC 67000 SL 66000 Cross 10x-20x', { leverageKeywords: ['power'] }, 8), signal({ ...btc, leverage: 8 }));
});

t.test('the rule version names what the parser read with, and nothing else', async (t) => {
  const rule = { longKeywords: ['send it'], strategyPrefix: 'A' };
  t.equal(ruleVersionOf(rule, 5), ruleVersionOf({ strategyPrefix: 'A', longKeywords: ['send it'] }, 5), 'key order does not matter');
  t.not(ruleVersionOf(rule, 5), ruleVersionOf(rule, 6), 'the cap is part of it');
  t.not(ruleVersionOf(rule, 5), ruleVersionOf({ ...rule, longKeywords: ['send'] }, 5));
  t.match(ruleVersionOf(undefined, undefined), /^sp2-[0-9a-f]{16}$/);
  t.equal(parseSignalText('BUY $SOL', rule, { leverageMax: 5 }).ruleVersion, ruleVersionOf(rule, 5));
  t.equal(compileSignalRule(rule, { leverageMax: 5 }), compileSignalRule(rule, { leverageMax: 5 }), 'compiled once per rule object');
  const compiled = compileSignalRule(rule, { leverageMax: 5 });
  t.strictSame(parseSignalText('A LONG BTC 67000 SL 66000 20x', compiled), parseSignalText('A LONG BTC 67000 SL 66000 20x', rule, { leverageMax: 5 }));
});

t.test('a rule is refused when saved with every problem named', async (t) => {
  const problems = (rule: SignalDetectionRule) => ruleProblems(rule).map((p) => `${p.path.join('.')}: ${p.message}`);
  t.strictSame(problems({ longKeywords: ['go long', 'send it'], tokenPatterns: ['\\$([A-Z]{2,10})'], strategyPrefix: '#alpha' }), []);
  t.match(problems({ longKeywords: ['🚀🚀'] }), [/^longKeywords\.0: a keyword needs letters, digits or signs/]);
  t.match(problems({ longKeywords: ['moon'], shortKeywords: ['MOON'] }), [/^shortKeywords\.0: the keyword "MOON" is also in longKeywords/]);
  t.match(problems({ strategyPrefix: '✨' }), [/^strategyPrefix: /]);
  t.match(problems({ tokenPatterns: Array.from({ length: 11 }, () => '#([A-Z]+)') }), [/^tokenPatterns: at most 10/]);
  const patterns: Array<[string, RegExp]> = [
    ['([A-Z]+', /not a valid regular expression/],
    ['[A-Z]+', /exactly one capturing group/],
    ['(A)(B)', /exactly one capturing group/],
    ['(\\w+)\\1', /back-references/],
    ['(?<=\\$)([A-Z]+)', /lookahead or lookbehind/],
    ['(?:[a-z]+)+([A-Z])', /nested repetition/],
    ['((?:a|ab)*)c', /nested repetition/],
    ['(\\w+)\\w*!', /catastrophic backtracking/],
    ['coin.*([A-Z]+)', /catastrophic backtracking/],
    ['(\\d+)\\.?\\d*x', /catastrophic backtracking/],
    ['(\\s*\\s*)x', /catastrophic backtracking/],
  ];
  for (const [pattern, reason] of patterns) t.match(problems({ tokenPatterns: [pattern] }), [reason], pattern);
  for (const pattern of ['coin:\\s*([a-z0-9]+)', '\\$([A-Z0-9]{2,10})(?:USDT)?', '([1-9A-HJ-NP-Za-km-z]{32,44})', '[^\\s]+\\s+#(\\w+)', '(\\w+)/USDT']) {
    t.strictSame(problems({ tokenPatterns: [pattern] }), [], pattern);
  }
});

t.test('the input schema refuses a bad rule with a 400 naming the field', async (t) => {
  const result = signalDetectionRuleInputSchema.safeParse({ tokenPatterns: ['#([A-Z]+)', '(a+)+'] });
  t.equal(result.success, false);
  t.strictSame(
    result.error?.issues.map((i) => i.path),
    [['tokenPatterns', 1]],
  );
  t.equal(signalDetectionRuleInputSchema.safeParse({ tokenPatterns: ['#([A-Z]+)'] }).success, true);
});

t.test('a stored rule that a newer check refuses still reads with its sound parts', async (t) => {
  t.strictSame(
    read('long 2.35 sl 2.18 coin=wif', { tokenPatterns: ['(a+)+', 'coin=([a-z]+)'] }),
    signal(open('WIF', 'long', zone(m(2_350_000)), { stopLoss: m(2_180_000) })),
  );
});
