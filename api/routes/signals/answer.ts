// The webhook's answer: the signal as read, its outcome, and what it did in each follower pool,
// with the followers anonymized (a developer never sees a user id): each result as the inbox shows it.
import { z } from 'zod';
import { interpretationSchema } from '../../../domain/signal/intent.ts';
import { signalOutcomes, type SignalExecuted } from '../../../domain/signal/events.ts';
import type { AppDeps } from '../../deps.ts';
import { executionResultSchema, executionResultsOf } from '../../../projections/signals/record.ts';
import type { ReceivedSignal } from '../../../commands/signals/commands.ts';

export const signalAnswerSchema = z.object({
  signalId: z.string(),
  /** `accepted`: the pools' decisions were not all known within the bound; the inbox shows them */
  outcome: z.enum([...signalOutcomes, 'accepted']),
  skipReason: z.string().optional(),
  /** the signalId was received before: this is the first delivery's outcome, nothing ran again */
  repeated: z.boolean(),
  source: z.enum(['text', 'structured']),
  ruleVersion: z.string(),
  interpretation: interpretationSchema,
  executionResults: z.array(executionResultSchema),
});
export type SignalAnswer = z.infer<typeof signalAnswerSchema>;

export function signalAnswer(received: ReceivedSignal, executed: SignalExecuted | null, masterSecret: string): SignalAnswer {
  const { signal } = received;
  const { interpretation } = signal.received;
  return {
    signalId: signal.received.signalId,
    outcome: executed?.outcome ?? 'accepted',
    ...(executed?.skipReason ? { skipReason: executed.skipReason } : {}),
    repeated: received.repeated,
    source: signal.received.source,
    ruleVersion: interpretation.ruleVersion,
    interpretation,
    executionResults: executionResultsOf(executed?.results ?? [], masterSecret),
  };
}

/** The answer once the signal's execution is known, waiting for the worker up to SIGNAL_ANSWER_TIMEOUT_MS (then `accepted`). */
export async function signalAnswerOf(deps: Pick<AppDeps, 'signals' | 'config'>, received: ReceivedSignal): Promise<SignalAnswer> {
  const { signal, agentId, signalKey } = received;
  const executed =
    signal.status === 'executed' ? signal.executed : ((await deps.signals?.waitFor(agentId, signalKey, deps.config.SIGNAL_ANSWER_TIMEOUT_MS)) ?? null);
  return signalAnswer(received, executed, deps.config.JWT_SECRET);
}
