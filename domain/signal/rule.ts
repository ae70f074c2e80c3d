// An agent's `signalDetectionRule` refines the built-in keywords: its keywords are added to their
// families, `strategyPrefix` keeps only the messages carrying it, `tokenPatterns` find tokens the
// built-in styles do not. A rule is checked when it is saved (every problem named) and compiled once
// per rule object; `ruleVersion` digests what the parser read with, so the inbox can show it.
import { signalDetectionRuleSchema, type SignalDetectionRule, type SignalExecutionDefaults } from '../agent/record.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import { buildTrie, phraseKeys, ruleFamilies, type Family, type KeywordTrie, type RuleKeywordField } from './keywords.ts';
import { normaliseText } from './normalise.ts';
import { tokenPatternProblem } from './pattern-guard.ts';

/** Changes whenever the built-in keywords or the reading change, so ruleVersions of two parsers differ. */
export const PARSER_VERSION = 'sp2';
export const MAX_TOKEN_PATTERNS = 10;

export interface CompiledSignalRule {
  ruleVersion: string;
  trie: KeywordTrie;
  /** present when the rule has a `strategyPrefix` */
  prefix?: RegExp;
  tokenPatterns: readonly RegExp[];
  leverageMax?: number;
}

export interface RuleProblem {
  path: Array<string | number>;
  message: string;
}

const keywordFields = Object.keys(ruleFamilies) as RuleKeywordField[];

/** Every reason the rule would not read as its developer means, each with the field it is in. */
export function ruleProblems(rule: SignalDetectionRule): RuleProblem[] {
  const problems: RuleProblem[] = [];
  const seen = new Map<string, RuleKeywordField>();
  for (const field of keywordFields) {
    (rule[field] ?? []).forEach((keyword, i) => {
      const keys = phraseKeys(keyword).join(' ');
      const other = seen.get(keys);
      if (keys === '') problems.push({ path: [field, i], message: 'a keyword needs letters, digits or signs besides emoji and decoration' });
      else if (other !== undefined && other !== field)
        problems.push({ path: [field, i], message: `the keyword "${keyword}" is also in ${other}: a keyword reads one way` });
      else seen.set(keys, field);
    });
  }
  if (rule.strategyPrefix !== undefined && normaliseText(rule.strategyPrefix).trim() === '') {
    problems.push({ path: ['strategyPrefix'], message: 'the strategy prefix needs letters, digits or signs besides emoji and decoration' });
  }
  const patterns = rule.tokenPatterns ?? [];
  if (patterns.length > MAX_TOKEN_PATTERNS) problems.push({ path: ['tokenPatterns'], message: `at most ${MAX_TOKEN_PATTERNS} token patterns` });
  patterns.forEach((pattern, i) => {
    const problem = tokenPatternProblem(pattern);
    if (problem) problems.push({ path: ['tokenPatterns', i], message: `a token pattern ${problem}` });
  });
  return problems;
}

/** The rule as a request carries it: the stored schema plus every problem above, as a refusal naming the field. */
export const signalDetectionRuleInputSchema = signalDetectionRuleSchema.superRefine((rule, ctx) => {
  for (const { path, message } of ruleProblems(rule)) ctx.addIssue({ code: 'custom', path, message });
});

/** The prefix as a phrase: any spacing, any case, not inside a word. */
function prefixPattern(prefix: string): RegExp {
  const text = normaliseText(prefix).trim();
  const body = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+');
  const before = /^[\p{L}\p{N}]/u.test(text) ? '(?<![\\p{L}\\p{N}])' : '';
  const after = /[\p{L}\p{N}]$/u.test(text) ? '(?![\\p{L}\\p{N}])' : '';
  return new RegExp(before + body + after, 'iu');
}

/** 64-bit FNV-1a of the text's UTF-16 code units, as 16 hex digits. */
function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) hash = ((hash ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n) & 0xffffffffffffffffn;
  return hash.toString(16).padStart(16, '0');
}

/** `sp2-<digest>`: the parser's version and a digest of what of the rule and defaults the parser reads. */
export function ruleVersionOf(rule: SignalDetectionRule | undefined, leverageMax: number | undefined): string {
  return `${PARSER_VERSION}-${fnv1a64(canonicalJson({ rule: rule ?? {}, leverageMax }))}`;
}

function compile(rule: SignalDetectionRule | undefined, leverageMax: number | undefined): CompiledSignalRule {
  const extra: Array<[Family, string]> = [];
  for (const field of keywordFields) for (const keyword of rule?.[field] ?? []) extra.push([ruleFamilies[field], keyword]);
  // A stored rule that a newer check refuses still reads with its sound parts.
  const tokenPatterns = (rule?.tokenPatterns ?? [])
    .slice(0, MAX_TOKEN_PATTERNS)
    .filter((pattern) => tokenPatternProblem(pattern) === undefined)
    .map((pattern) => new RegExp(pattern, 'dgiu'));
  const prefix = rule?.strategyPrefix !== undefined && normaliseText(rule.strategyPrefix).trim() !== '' ? prefixPattern(rule.strategyPrefix) : undefined;
  return {
    ruleVersion: ruleVersionOf(rule, leverageMax),
    trie: buildTrie(extra),
    ...(prefix ? { prefix } : {}),
    tokenPatterns,
    ...(leverageMax !== undefined ? { leverageMax } : {}),
  };
}

// Compiled once per rule object (the caller's agent record) and leverage cap; no rule: once per cap.
const compiledByRule = new WeakMap<SignalDetectionRule, Map<number | undefined, CompiledSignalRule>>();
const compiledDefault = new Map<number | undefined, CompiledSignalRule>();

/** The rule and defaults ready to parse with; the same objects give the same compiled rule. */
export function compileSignalRule(rule?: SignalDetectionRule, defaults?: SignalExecutionDefaults): CompiledSignalRule {
  const leverageMax = defaults?.leverageMax;
  const cache = rule === undefined ? compiledDefault : (compiledByRule.get(rule) ?? new Map<number | undefined, CompiledSignalRule>());
  if (rule !== undefined) compiledByRule.set(rule, cache);
  let compiled = cache.get(leverageMax);
  if (compiled === undefined) cache.set(leverageMax, (compiled = compile(rule, leverageMax)));
  return compiled;
}
