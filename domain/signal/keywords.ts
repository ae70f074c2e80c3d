// Keyword families: the built-in phrases that read the common channel styles, and the families an
// agent's `signalDetectionRule` adds to. Phrases are lexed like the text they are looked for in, so a
// keyword matches whole words, ignoring case, spacing, emoji and fonts.
import type { SignalDetectionRule } from '../agent/record.ts';
import { lex, type Lexeme } from './lexer.ts';
import { normaliseText } from './normalise.ts';

export const families = [
  'long',
  'short',
  'buy',
  'sell',
  'entry',
  'buyZone',
  'market',
  'breakoutAbove',
  'breakoutBelow',
  'breakout',
  'tp',
  'sl',
  'leverage',
  'close',
  'partialClose',
  'closeSome',
  'cancel',
  'breakeven',
  'stopMove',
  'newTargets',
  'report',
  'noise',
] as const;
export type Family = (typeof families)[number];

const phrases = (text: string) => text.split('|');

/** The built-in phrases of each family; `noise` phrases are read and ignored ("long term", "a buy"). */
export const builtInKeywords: Record<Family, readonly string[]> = {
  long: phrases('long|go long|longing'),
  short: phrases('short|go short|shorting'),
  buy: phrases('buy|buying|spot buy'),
  sell: phrases('sell'),
  entry: phrases(
    'entry|entries|entry zone|entry price|entry range|entry area|entry point|entry points|entry targets|entry level|entry levels|enter|enter at|enter between|limit|limit entry|limit order|zone|dca',
  ),
  buyZone: phrases('buy zone|buy area|buy range|buy between|buy around|accumulation zone|accumulate|accumulate between'),
  market: phrases('cmp|now|market|market price|at market|current price|current market price|market entry|market order|enter now'),
  breakoutAbove: phrases(
    'above|break above|breakout above|on break above|on a break above|on breakout above|on a breakout above|break and close above|candle close above',
  ),
  breakoutBelow: phrases(
    'below|break below|breakdown below|breakout below|breakdown|on break below|on a break below|on breakdown below|on a breakdown below|break and close below|candle close below',
  ),
  /** a breakout entry whose direction is the side's: a long's above, a short's below */
  breakout: phrases(
    'on break of|on a break of|on the break of|on breakout of|on a breakout of|break of|breakout of|on breakout|on a breakout|break and close|break and retest of|on a clean break of',
  ),
  tp: phrases(
    'tp|tps|tgt|tgts|target|targets|take profit|take profits|take-profit|takeprofit|take profit target|take profit targets|profit target|profit targets|sell target|sell targets|exit targets',
  ),
  sl: phrases('sl|s/l|stop|stop loss|stop-loss|stoploss|stop price|stop target|stop targets|invalidation|invalidation level|invalid below|invalid above'),
  leverage: phrases('leverage|lev|lever|cross|isolated|cross margin|isolated margin'),
  close: phrases(
    "close|close all|close position|closing|closing all|closing it|closing the trade|closing the position|closing the rest|closing remaining|closing everything|closing out|we're out|we are out|i'm out|im out|all out|fully out|exiting|close trade|close full|close fully|close everything|close now|close it|close the trade|close the position|close remaining|close rest|close the rest|exit|exit all|exit now|exit trade|exit position",
  ),
  partialClose: phrases(
    'partial close|close partial|close partially|partially close|take partial|take partials|take partial profit|take partial profits|take some profit|take some profits|book profit|book profits|book partial|book partials|secure profit|secure profits|secure partial|secure partials|taking partial|taking partials|taking partial profit|taking partial profits|taking some profit|taking some profits|taking profits off|booking profit|booking profits|booking partials|securing profit|securing profits|locking profit|locking profits|lock in profit|lock in profits|locking in profit|locking in profits',
  ),
  /** a close only with its amount ("sold 30% of $SOL", "sold the remaining $WIF bag"); alone ("sold the top") it is a report */
  closeSome: phrases('sold|sold off|selling|trimmed|trimming|offloaded|offloading|dumped'),
  cancel: phrases(
    "cancel|cancel remaining entries|cancel remaining|cancel entries|cancel entry|cancel order|cancel orders|cancel limit|cancel limit orders|cancel pending|cancel pending orders|cancel signal|cancel the signal|cancel trade|cancel the trade|remove entries|remove orders|delete orders|do not enter|don't enter|dont enter|cancelled|canceled",
  ),
  breakeven: phrases('breakeven|break even|break-even|b/e|risk free|risk-free|riskfree'),
  stopMove: phrases(
    'moving sl|moving sl to|moving stop|moving stop to|moving stop loss|moving stop loss to|moving the stop|moving the stop to|moving our stop|moving our stop to|moving stops to|moved sl|moved sl to|moved stop|moved stop to|moved stops to|move stops to|stops to|stops moved to|move your stop|move your stop to|move your sl|move your sl to|move your stop loss|move your stop loss to|move the stop|move the stop to|move the sl|move the sl to|move our stop|trailing stop to|trailing sl to|trail your stop|trail your stop to|raising stop|raising sl|tighten stop|tighten sl|sl now at|stop now at|stop loss now at|move sl|move sl to|move stop|move stop to|move stop loss|move stop loss to|move stoploss|move stoploss to|move to|sl moved to|stop moved to|sl to|stop to|stop loss to|new sl|new stop|new stop loss|update sl|update stop|adjust sl|adjust stop|change sl|change stop|trail sl|trail stop|raise sl|raise stop|set sl|set stop',
  ),
  newTargets: phrases(
    'new tp|new tps|new target|new targets|new take profit|new take profits|update tp|update tps|update targets|updated targets|targets updated|tp updated|change tp|change targets|add target|add tp|extra target',
  ),
  report: phrases('hit|reached|done|achieved|smashed|triggered|touched|completed|filled|closed|stopped|stopped out'),
  noise: phrases(
    'a long|a short|a buy|a sell|the long|the short|long term|short term|long-term|short-term|long time|long way|short squeeze|long squeeze|long/short|long short|buy the dip|sell off|sell-off|sell the news|no entry',
  ),
};

/** The rule's keyword fields and the family each refines. */
export const ruleFamilies = {
  longKeywords: 'long',
  shortKeywords: 'short',
  buyKeywords: 'buy',
  sellKeywords: 'sell',
  tpKeywords: 'tp',
  slKeywords: 'sl',
  leverageKeywords: 'leverage',
  cancelKeywords: 'cancel',
  breakevenKeywords: 'breakeven',
  partialCloseKeywords: 'partialClose',
  breakoutAboveKeywords: 'breakoutAbove',
  breakoutBelowKeywords: 'breakoutBelow',
  entryZoneKeywords: 'entry',
} as const satisfies Partial<Record<keyof SignalDetectionRule, Family>>;
export type RuleKeywordField = keyof typeof ruleFamilies;

interface TrieNode {
  next: Map<string, TrieNode>;
  family?: Family;
}
export type KeywordTrie = TrieNode;

/** The keys of a phrase's lexemes; empty when nothing readable is left after normalising. */
export function phraseKeys(phrase: string): string[] {
  const out: Lexeme[] = [];
  lex(normaliseText(phrase).trim(), out);
  return out.filter((l) => l.kind !== 'nl').map((l) => l.key);
}

/** The built-in phrases, then the rule's (which win over a built-in of another family). */
export function buildTrie(extra: ReadonlyArray<[Family, string]>): KeywordTrie {
  const root: TrieNode = { next: new Map() };
  const add = (family: Family, phrase: string) => {
    const keys = phraseKeys(phrase);
    if (keys.length === 0) return;
    let node = root;
    for (const key of keys) {
      let child = node.next.get(key);
      if (child === undefined) node.next.set(key, (child = { next: new Map() }));
      node = child;
    }
    node.family = family;
  };
  for (const family of families) for (const phrase of builtInKeywords[family]) add(family, phrase);
  for (const [family, phrase] of extra) add(family, phrase);
  return root;
}

/** The longest phrase starting at `lexemes[at]`: its family and how many lexemes it spans. */
export function longestPhrase(trie: KeywordTrie, lexemes: readonly Lexeme[], at: number): { family: Family; length: number } | undefined {
  let node: TrieNode | undefined = trie;
  let found: { family: Family; length: number } | undefined;
  for (let i = at; i < lexemes.length; i++) {
    node = node.next.get(lexemes[i]!.key);
    if (node === undefined) break;
    if (node.family !== undefined) found = { family: node.family, length: i - at + 1 };
  }
  return found;
}
