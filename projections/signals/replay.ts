// A signal read again with the agent's current rules (the inbox's replay, dry run): what the parser
// makes of the stored body now, next to what it made of it then. Reads only: nothing is executed.
import { z } from 'zod';
import type { SignalDetectionRule, SignalExecutionDefaults } from '../../domain/agent/record.ts';
import { canonicalJson } from '../../domain/shared/canonical-json.ts';
import { interpretSignalBody } from '../../domain/signal/body.ts';
import { signalOutcomeSchema } from '../../domain/signal/events.ts';
import { interpretationSchema, type Interpretation } from '../../domain/signal/intent.ts';
import type { StoredSignal } from './queries.ts';

export const replayResultSchema = z.object({
  signalId: z.string(),
  /** false: the new reading was executed too (`execution`, the webhook's answer for the replay) */
  dryRun: z.boolean(),
  /** how the signal was read when it arrived, and its outcome (null: not executed yet) */
  previous: z.object({ interpretation: interpretationSchema, ruleVersion: z.string(), outcome: signalOutcomeSchema.nullable() }),
  /** how the current rules read it; null when the body is now refused (`refused` says why) */
  interpretation: interpretationSchema.nullable(),
  ruleVersion: z.string().nullable(),
  refused: z
    .object({
      reason: z.enum(['VALIDATION_FAILED', 'INVALID_LEVELS']),
      problems: z.array(z.object({ code: z.string(), path: z.string(), message: z.string() })),
    })
    .optional(),
  /** whether the reading differs from the first one (the rule version aside) */
  changed: z.boolean(),
});
export type ReplayResult = z.infer<typeof replayResultSchema>;

const readingOf = ({ ruleVersion: _version, ...reading }: Interpretation) => canonicalJson(reading);

export function replaySignal(signal: StoredSignal, rule: SignalDetectionRule | undefined, defaults: SignalExecutionDefaults | undefined): ReplayResult {
  const previous = { interpretation: signal.interpretation, ruleVersion: signal.ruleVersion, outcome: signal.outcome };
  const now = interpretSignalBody(signal.body, rule, defaults);
  if (!now.ok)
    return {
      signalId: signal.signalId,
      dryRun: true,
      previous,
      interpretation: null,
      ruleVersion: null,
      refused: { reason: now.reason, problems: now.problems },
      changed: true,
    };
  const { interpretation } = now;
  return {
    signalId: signal.signalId,
    dryRun: true,
    previous,
    interpretation,
    ruleVersion: interpretation.ruleVersion,
    changed: readingOf(interpretation) !== readingOf(signal.interpretation),
  };
}
