// Facts of one signal of one agent, stream `signal-{agentId}.{signalKey}`: what arrived and how it
// was read (SignalReceived, appended once: a repeated signalId finds it), then what it did in every
// follower pool (SignalExecuted, once). The inbox and the webhook's answer read these.
import { z } from 'zod';
import { interpretationSchema, upcastInterpretation } from './intent.ts';

export const signalOutcomes = ['executed', 'partially_executed', 'skipped', 'unmatched', 'failed'] as const;
export const signalOutcomeSchema = z.enum(signalOutcomes);
export type SignalOutcome = z.infer<typeof signalOutcomeSchema>;

/** What the signal did in one follower pool; `simulated`: a test-trading pool's paper execution, nothing locked. */
export const poolResultSchema = z.object({
  poolId: z.string().min(1),
  status: z.enum(['executed', 'simulated', 'skipped', 'failed']),
  /** the trades it opened or managed (simulated: executed on paper) */
  tradeIds: z.array(z.string()),
  skipReason: z.string().optional(),
  errorMessage: z.string().optional(),
  /** stable tags of a failure (`NO_MARK_PRICE`, `INVALID_LEVELS`, …) */
  errorTags: z.array(z.string()).optional(),
});
export type PoolResult = z.infer<typeof poolResultSchema>;

export const signalReceivedSchema = z.object({
  agentId: z.string().min(1),
  /** the sender's signalId, or one given by the platform (then `signalIdGiven` is false) */
  signalId: z.string().min(1),
  signalIdGiven: z.boolean(),
  source: z.enum(['text', 'structured']),
  /** the body as it arrived (parsed JSON) */
  body: z.unknown(),
  /** old events' micro-USD prices are upcast (intent.ts) */
  interpretation: z.preprocess(upcastInterpretation, interpretationSchema),
  replyTo: z.string().optional(),
  receivedAt: z.string(),
});
export type SignalReceived = z.infer<typeof signalReceivedSchema>;

export const signalExecutedSchema = z.object({
  outcome: signalOutcomeSchema,
  /** the signal's reason when nothing was tried (INVALID_LEVELS, NO_FOLLOWERS), or the pools' common one */
  skipReason: z.string().optional(),
  results: z.array(poolResultSchema),
  executedAt: z.string(),
});
export type SignalExecuted = z.infer<typeof signalExecutedSchema>;

export const signalEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('SignalReceived'), data: signalReceivedSchema }),
  z.object({ type: z.literal('SignalExecuted'), data: signalExecutedSchema }),
]);
export type SignalEvent = z.infer<typeof signalEventSchema>;
export const signalEventTypes: ReadonlySet<string> = new Set(signalEventSchema.options.map((o) => o.shape.type.value));
