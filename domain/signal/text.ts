// A text signal → its interpretation: normalise, keep only messages carrying the strategy prefix,
// find the rule's token patterns, lex, mark keywords, cut into one block per trade, read and judge
// each block. Pure and total: any string gives an interpretation, never an exception.
import type { SignalDetectionRule, SignalExecutionDefaults } from '../agent/record.ts';
import type { Interpretation } from './intent.ts';
import { markKeywords, splitBlocks } from './items.ts';
import { interpret, judge } from './judge.ts';
import { lex, type Lexeme } from './lexer.ts';
import { MAX_TEXT_LENGTH, normaliseText } from './normalise.ts';
import { readBlock } from './reader.ts';
import { compileSignalRule, type CompiledSignalRule } from './rule.ts';
import { normaliseToken } from './token.ts';

/** Token patterns look at the start of a message, line by line, each line cut at this length. */
export const PATTERN_WINDOW = 1_000;
export const PATTERN_LINE = 200;

interface Span {
  start: number;
  end: number;
  symbol: string;
}

/** The tokens the rule's patterns capture (group 1), earliest first, overlaps dropped. */
function patternTokens(text: string, patterns: readonly RegExp[]): Span[] {
  const spans: Span[] = [];
  let lineStart = 0;
  for (const line of text.slice(0, PATTERN_WINDOW).split('\n')) {
    const head = line.slice(0, PATTERN_LINE);
    for (const pattern of patterns) {
      for (const m of head.matchAll(pattern)) {
        const at = m.indices?.[1];
        const symbol = m[1] === undefined ? undefined : normaliseToken(m[1]);
        if (at && symbol) spans.push({ start: lineStart + at[0], end: lineStart + at[1], symbol });
      }
    }
    lineStart += line.length + 1;
  }
  spans.sort((a, b) => a.start - b.start);
  return spans.filter((span, i) => i === 0 || span.start >= spans[i - 1]!.end);
}

/** Lexemes of the text, with the pattern tokens in place of the text they cover. */
function lexemesOf(text: string, patterns: readonly RegExp[]): Lexeme[] {
  const out: Lexeme[] = [];
  let from = 0;
  for (const span of patternTokens(text, patterns)) {
    lex(text, out, from, span.start);
    out.push({ kind: 'token', start: span.start, key: text.slice(span.start, span.end).toLowerCase(), symbol: span.symbol });
    from = span.end;
  }
  lex(text, out, from, text.length);
  return out;
}

const isCompiled = (rule: SignalDetectionRule | CompiledSignalRule): rule is CompiledSignalRule => 'trie' in rule;

/**
 * What a channel message says, read with the built-in keywords refined by the agent's rule. Given a
 * compiled rule, `defaults` are those it was compiled with. Prices are exact decimal USD text (to 10^-18).
 */
export function parseSignalText(text: string, rule?: SignalDetectionRule | CompiledSignalRule, defaults?: SignalExecutionDefaults): Interpretation {
  const compiled = rule !== undefined && isCompiled(rule) ? rule : compileSignalRule(rule, defaults);
  const { ruleVersion } = compiled;
  if (text.length > MAX_TEXT_LENGTH) return { kind: 'unmatched', ruleVersion, reason: 'TEXT_TOO_LONG' };
  let normalised = normaliseText(text);
  // NFKC may expand a character eighteenfold (U+FDFA): the bound holds after it too.
  if (normalised.length > 2 * MAX_TEXT_LENGTH) return { kind: 'unmatched', ruleVersion, reason: 'TEXT_TOO_LONG' };
  if (compiled.prefix) {
    const found = compiled.prefix.exec(normalised);
    if (!found) return { kind: 'unmatched', ruleVersion, reason: 'NO_STRATEGY_PREFIX' };
    normalised = normalised.slice(0, found.index) + ' '.repeat(found[0].length) + normalised.slice(found.index + found[0].length);
  }
  const blocks = splitBlocks(markKeywords(lexemesOf(normalised, compiled.tokenPatterns), compiled.trie));
  return interpret(
    blocks.map((block) => judge(readBlock(block), compiled.leverageMax)),
    ruleVersion,
  );
}
