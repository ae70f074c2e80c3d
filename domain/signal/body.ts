// The webhook's body: a text signal (`text`) or a structured one (every other body). One entry point,
// so the route refuses only a body that is neither, and the inbox keeps the interpretation.
import { z } from 'zod';
import type { SignalDetectionRule, SignalExecutionDefaults } from '../agent/record.ts';
import type { Interpretation } from './intent.ts';
import type { CompiledSignalRule } from './rule.ts';
import { parseStructuredSignal, type StructuredProblem } from './structured.ts';
import { parseSignalText } from './text.ts';

/** A text signal; a text too long to parse is kept as `unmatched` (TEXT_TOO_LONG), not refused. */
export const textSignalSchema = z.strictObject({
  signalId: z.string().min(1).max(200).optional(),
  /** the `signalId` of the signal this message replies to (a follow-up's trade) */
  replyTo: z.string().min(1).max(200).optional(),
  text: z.string({ message: 'text must be a string' }).min(1, 'text must not be empty'),
});

export type SignalBodyResult =
  | { ok: true; source: 'text' | 'structured'; signalId?: string; replyTo?: string; interpretation: Interpretation }
  | { ok: false; reason: 'VALIDATION_FAILED' | 'INVALID_LEVELS'; problems: StructuredProblem[] };

const isTextBody = (body: unknown) => typeof body === 'object' && body !== null && !Array.isArray(body) && 'text' in body;

/** A webhook body → its interpretation, or why it is refused. */
export function interpretSignalBody(body: unknown, rule?: SignalDetectionRule | CompiledSignalRule, defaults?: SignalExecutionDefaults): SignalBodyResult {
  if (!isTextBody(body)) {
    const result = parseStructuredSignal(body, defaults);
    if (!result.ok) return result;
    const { signalId, replyTo } = result.signal;
    return { ok: true, source: 'structured', ...(signalId ? { signalId } : {}), ...(replyTo ? { replyTo } : {}), interpretation: result.interpretation };
  }
  const parsed = textSignalSchema.safeParse(body);
  if (!parsed.success) {
    return {
      ok: false,
      reason: 'VALIDATION_FAILED',
      problems: parsed.error.issues.map((i) => ({ code: 'INVALID_FIELD', path: i.path.join('.') || 'body', message: i.message })),
    };
  }
  const { signalId, replyTo, text } = parsed.data;
  return {
    ok: true,
    source: 'text',
    ...(signalId ? { signalId } : {}),
    ...(replyTo ? { replyTo } : {}),
    interpretation: parseSignalText(text, rule, defaults),
  };
}
