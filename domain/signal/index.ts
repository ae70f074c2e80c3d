// Signals: a structured body or a channel message → one interpretation; which trade a
// follow-up manages. Pure: no clock, no I/O, no randomness.
export * from './intent.ts';
export { parseSignalText, PATTERN_LINE, PATTERN_WINDOW } from './text.ts';
export {
  parseStructuredSignal,
  structuredSignalSchema,
  STRUCTURED_VERSION,
  type StructuredProblem,
  type StructuredResult,
  type StructuredSignal,
} from './structured.ts';
export {
  compileSignalRule,
  ruleProblems,
  ruleVersionOf,
  signalDetectionRuleInputSchema,
  PARSER_VERSION,
  MAX_TOKEN_PATTERNS,
  type CompiledSignalRule,
  type RuleProblem,
} from './rule.ts';
export { resolveTarget, type FollowUpIntent, type OpenTradeRef, type TargetResolution } from './resolve.ts';
export { normaliseToken } from './token.ts';
export { MAX_TEXT_LENGTH } from './normalise.ts';
export { interpretSignalBody, textSignalSchema, type SignalBodyResult } from './body.ts';
export type { SignalDetectionRule, SignalExecutionDefaults } from '../agent/record.ts';
