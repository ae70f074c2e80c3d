// Which open trade a follow-up manages. docs/domain-rules.md's order (Agent trades and signals): the signal it names (its `signalId`, or
// the id of the message it replies to), then its token and side. Never a guess: more than one
// candidate left is AMBIGUOUS_TARGET, and the follow-up is skipped.
import { directionOf, type Intent, type Side } from './intent.ts';
import { normaliseToken } from './token.ts';

/** What the resolver needs of an open trade; the caller's own trade type may carry more. */
export interface OpenTradeRef {
  token: string;
  side: Side;
  /** the signal that opened it */
  signalId?: string;
}

export type FollowUpIntent = Exclude<Intent, { action: 'open' }>;

export type TargetResolution<T> =
  | { kind: 'found'; trade: T }
  | { kind: 'notFound' }
  | { kind: 'ambiguous'; skipReason: 'AMBIGUOUS_TARGET'; candidates: number };

const symbolOf = (token: string) => normaliseToken(token) ?? token;

/**
 * The trade among the agent's open trades that `intent` manages. `ref` is the signal id the
 * follow-up names (a structured `replyTo`, a reply-to message id): when given, only that signal's
 * trades are candidates. Token and side then narrow them (buy matches long, sell short). One
 * candidate left is the target, also when the message named nothing and only one trade is open.
 */
export function resolveTarget<T extends OpenTradeRef>(intent: FollowUpIntent, openTrades: readonly T[], ref?: string): TargetResolution<T> {
  let candidates = ref === undefined ? openTrades : openTrades.filter((t) => t.signalId === ref);
  if (intent.token !== undefined) {
    const symbol = symbolOf(intent.token);
    candidates = candidates.filter((t) => symbolOf(t.token) === symbol);
  }
  if (intent.side !== undefined) {
    const direction = directionOf(intent.side);
    candidates = candidates.filter((t) => directionOf(t.side) === direction);
  }
  if (candidates.length === 1) return { kind: 'found', trade: candidates[0]! };
  return candidates.length === 0 ? { kind: 'notFound' } : { kind: 'ambiguous', skipReason: 'AMBIGUOUS_TARGET', candidates: candidates.length };
}
