// Any text, however long or hostile, gives a valid interpretation, quickly: the parser runs on
// every message a channel posts, inside the API process.
import fc from 'fast-check';
import t from 'tap';
import { interpretationSchema, MAX_TEXT_LENGTH, parseSignalText, type SignalDetectionRule } from '../../../domain/signal/index.ts';
import { levelProblems } from '../../../domain/signal/levels.ts';

/** Generous for a shared 2-core machine; a message normally takes tens of microseconds. */
// CPU time of this process, not wall time: other processes on a loaded 2-core machine do not count.
// Catastrophic backtracking takes seconds; a linear parse of 10,000 characters takes a few ms.
const MAX_MS = 250;

const VOCABULARY = [
  'LONG',
  'short',
  'BUY',
  'sell',
  'Entry',
  'entry zone',
  'Buy zone',
  'CMP',
  'now',
  'market',
  'TP',
  'TP1',
  'Target 2:',
  'targets',
  'SL',
  'Stop loss',
  'Invalidation',
  'Leverage',
  'Lev',
  'Cross 10x',
  '10x-20x',
  'x5',
  'above',
  'below',
  'close 50%',
  'close all',
  'cancel remaining entries',
  'move SL to entry',
  'breakeven',
  'hit',
  '✅',
  '🚀',
  '🎯',
  '#BTC/USDT',
  '$SOL',
  'BTCUSDT',
  'ETH-PERP',
  '67,200',
  '67 200',
  '67.2k',
  '1.2m',
  '0.00001234',
  '0,5',
  '150',
  '(30%)',
  '-',
  '/',
  '|',
  ',',
  '.',
  ':',
  '\n',
  '\n\n',
  '1)',
  '2.',
  '𝐋𝐎𝐍𝐆',
  'ＳＨＯＲＴ',
  'after',
  'and',
  'the',
  '9'.repeat(40),
  '1,'.repeat(20),
  'So11111111111111111111111111111111111111112',
  '\ud800',
  '\u202e',
]; // prettier-ignore

const anyText = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 3_000 });
const channelSoup = fc
  .array(fc.constantFrom(...VOCABULARY), { maxLength: 600 })
  .chain((words) =>
    fc
      .array(fc.constantFrom(' ', '', '  ', '\n'), { minLength: words.length, maxLength: words.length })
      .map((gaps) => words.map((w, i) => w + gaps[i]).join('')),
  );
const rule: SignalDetectionRule = {
  longKeywords: ['send it'],
  tpKeywords: ['goal'],
  strategyPrefix: 'LONG',
  tokenPatterns: ['coin:\\s*([a-z0-9]+)', '[^\\s]+\\s+#(\\w+)', '\\$([A-Z0-9]{2,10})(?:USDT)?'],
};

function check(text: string, withRule: boolean): void {
  const started = process.cpuUsage();
  const interpretation = parseSignalText(text, withRule ? rule : undefined, withRule ? { leverageMax: 5 } : undefined);
  const used = process.cpuUsage(started);
  const elapsed = (used.user + used.system) / 1000;
  if (elapsed > MAX_MS) throw new Error(`${elapsed.toFixed(1)} ms for ${JSON.stringify(text.slice(0, 80))}… (${text.length} characters)`);
  interpretationSchema.parse(interpretation);
  if (interpretation.kind === 'signal') {
    interpretation.intents.forEach((intent, i) => {
      if (intent.action === 'open' && levelProblems(intent, i).length > 0) throw new Error('a signal with contradictory levels');
      if (withRule && intent.action === 'open' && (intent.leverage ?? 1) > 5) throw new Error('leverage above the cap');
    });
  }
}

t.test('any string gives a valid interpretation, quickly', async (t) => {
  fc.assert(
    fc.property(anyText, fc.boolean(), (text, withRule) => check(text, withRule)),
    { numRuns: 400 },
  );
  t.pass();
});

t.test('channel-like soups of keywords, numbers and emoji give a valid interpretation, quickly', async (t) => {
  fc.assert(
    fc.property(channelSoup, fc.boolean(), (text, withRule) => check(text, withRule)),
    { numRuns: 400 },
  );
  t.pass();
});

t.test('long hostile texts finish quickly, with and without token patterns', async (t) => {
  const n = MAX_TEXT_LENGTH;
  const hostile = [
    '9'.repeat(n),
    '1,'.repeat(n / 2),
    '1 '.repeat(n / 2),
    '1 000 '.repeat(n / 6),
    'a'.repeat(n),
    'A'.repeat(n),
    ' '.repeat(n),
    '\n'.repeat(n),
    '#'.repeat(n),
    '$A'.repeat(n / 2),
    'x1'.repeat(n / 2),
    '1x-'.repeat(n / 3),
    'LONG '.repeat(n / 5),
    'TP1 '.repeat(n / 4),
    'close '.repeat(n / 6),
    `coin:${' '.repeat(n - 5)}`,
    `${'a '.repeat(n / 2)}#`,
    '🚀'.repeat(n / 2),
    '𝐋'.repeat(n / 2),
    'ﷺ'.repeat(n),
    '0.'.repeat(n / 2),
    'BTCUSDT'.repeat(n / 7),
    'So1'.repeat(n / 3),
    'move SL to '.repeat(n / 11),
    '(30%) '.repeat(n / 6),
    'LONG BTC 1\n'.repeat(n / 11),
  ]; // prettier-ignore
  for (const text of hostile) {
    check(text, false);
    check(text, true);
  }
  const tooLong = (text: string) =>
    t.strictSame(parseSignalText(text), { kind: 'unmatched', ruleVersion: parseSignalText('').ruleVersion, reason: 'TEXT_TOO_LONG' });
  tooLong('x'.repeat(n + 1));
  tooLong('ﷺ'.repeat(n / 5)); // 18 characters each once normalised: beyond twice the length
});
