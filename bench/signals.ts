// The parsing figure: text signals parsed per second on one core (target >= 50,000/s). A
// mix as channels post it: most messages are chatter and result reports, then opens in the common
// styles (emoji, mathematical bold, zones, numbered targets with shares), then follow-ups. Parsed
// with an agent's rule (extra keywords, a strategy prefix absent from none, a token pattern),
// compiled once as the worker keeps it per agent, and with the built-in keywords alone.
import { compileSignalRule, parseSignalText, type CompiledSignalRule, type Interpretation } from '../domain/signal/index.ts';
import { fmt, report, verdict } from './measure.ts';

const CHATTER = [
  'GM fam ☀️ big week ahead',
  'TP2 hit ✅ +34%',
  'Another 🚀',
  'All targets hit on #SOL 🎯🎯🎯 +120%',
  'SL hit on ETH, -4.2%. On to the next one',
  'BTC looking strong, might long soon 👀',
  "Who's still holding $SOL? 🙋",
  'Market is choppy today, stay safe and manage your risk',
  "Don't forget to close your positions before the weekend",
  'Closed BTC long at +12.5% profit 🔥',
  'Free VIP access this week only! DM me',
  '+450% on #PEPE this month 🐸🚀',
  '#BTC 67,000 support, 69,500 resistance. If we lose it, 64k is next. Not financial advice, DYOR 🙏',
];
const OPENS = [
  '⚡️⚡️ #BTC/USDT ⚡️⚡️\nSignal Type: Regular (Long)\nLeverage: Cross (20X)\nEntry Targets: 67,200 - 66,800\nTake-Profit Targets:\n1) 67,900\n2) 68,600\n3) 69,500\nStop Targets: 65,900',
  '🔴 SHORT #SOL/USDT\nEntry: CMP (148.20)\nTargets: 145.5 - 142 - 138\nStop: 152.4\nLeverage: 10x',
  '#OP/USDT LONG\nEntry 1.92-1.98\nTP1 2.05 (30%)\nTP2 2.15 (30%)\nTP3 2.30 (40%)\nSL 1.84\nLev 3x-5x',
  '𝗟𝗢𝗡𝗚 𝗕𝗧𝗖 𝟲𝟳𝟬𝟬𝟬 𝗦𝗟 𝟲𝟲𝟬𝟬𝟬 𝗧𝗣 𝟲𝟵𝟬𝟬𝟬',
  '#LINK spot\nBuy zone: 13.80 - 14.20\nSell targets: 15.00, 16.20, 17.50\nStop loss: 12.90',
  'Long BTC 67.2k-67.5k, stop 66.4k, targets 68k 69.5k 71k',
  'BUY $BONK 0.00002150 SL 0.00001980 TP 0.00002500',
  '1) LONG BTC 67000 SL 66000 TP 69000\n2) SHORT ETH 3500 SL 3600 TP 3300',
];
const FOLLOW_UPS = [
  'TP1 hit, move SL to entry',
  '#ETH TP2 reached 🎯 Close 50% and move stop to breakeven',
  'Cancel remaining entries for $AVAX',
  'Close all #SOL positions now',
  'New SL for #BTC: 66,900',
];
/** 13 chatter, 8 opens, 5 follow-ups: about half of what a busy channel posts is not a signal. */
const MIX = [...CHATTER, ...OPENS, ...FOLLOW_UPS];

const RULE = { longKeywords: ['send it'], tpKeywords: ['goal'], cancelKeywords: ['abort'], tokenPatterns: ['coin:\\s*([a-z0-9]+)'] };

/** Messages per second parsing the mix round-robin for `seconds`, after a warm-up; kinds counted so the work is used. */
function measure(rule: CompiledSignalRule, seconds: number): { rate: number; kinds: Record<Interpretation['kind'], number> } {
  const kinds = { signal: 0, unmatched: 0, skipped: 0 };
  for (let i = 0; i < 20_000; i++) parseSignalText(MIX[i % MIX.length]!, rule);
  let count = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  while (performance.now() < until) {
    for (let i = 0; i < MIX.length; i++) kinds[parseSignalText(MIX[i]!, rule).kind]++;
    count += MIX.length;
  }
  return { rate: count / ((performance.now() - started) / 1000), kinds };
}

export async function signalParseBench(seconds: number) {
  const builtIn = measure(compileSignalRule(), seconds);
  const withRule = measure(compileSignalRule(RULE, { leverageMax: 10 }), seconds);
  const share = (k: Record<string, number>) => `${fmt(k.signal!)} signals, ${fmt(k.unmatched!)} unmatched, ${fmt(k.skipped!)} skipped`;
  console.log(
    `\nText signal parsing (one core, ${MIX.length} messages round-robin: ${CHATTER.length} chatter, ${OPENS.length} opens, ${FOLLOW_UPS.length} follow-ups)`,
  );
  report([
    [
      'built-in keywords',
      `${fmt(builtIn.rate)} msg/s`,
      `${fmt(1e6 / builtIn.rate, 1)} us/msg; ${share(builtIn.kinds)}; target >= 50,000: ${verdict(builtIn.rate >= 50_000)}`,
    ],
    [
      'with an agent rule',
      `${fmt(withRule.rate)} msg/s`,
      `${fmt(1e6 / withRule.rate, 1)} us/msg; keywords, token pattern, leverage cap; target >= 50,000: ${verdict(withRule.rate >= 50_000)}`,
    ],
  ]);
  return { rate: Math.min(builtIn.rate, withRule.rate) };
}
