// The agent's signal inbox as its developer reads it: every signal with its raw body, how it was read
// (interpretation, rule version) and what it did in each follower pool. A pool is shown by the
// follower's anonymized id (infra/anonymize.ts), never by its pool id, which holds the user id.
import { z } from 'zod';
import { interpretationSchema } from '../../domain/signal/intent.ts';
import { poolResultSchema, signalOutcomeSchema, type PoolResult, type SignalExecuted, type SignalReceived } from '../../domain/signal/events.ts';
import { poolEndpointOf } from '../../domain/transfer/plan.ts';
import { walletContextSchema } from '../../domain/wallet/context.ts';
import { anonymizedSubscriberId } from '../../infra/anonymize.ts';

/** The inbox's outcome filter: an outcome, or `pending` for a signal not executed yet. */
export const inboxOutcomeSchema = z.enum([...signalOutcomeSchema.options, 'pending']);
export type InboxOutcome = z.infer<typeof inboxOutcomeSchema>;

/**
 * What the signal did in one follower pool: the follower (anonymized) and the pool's context, and
 * the spec's `executionResult` (status, trades, `skipReason`, `errorMessage` with `errorTags`).
 */
export const executionResultSchema = z.object({
  subscriberId: z.string(),
  walletContext: walletContextSchema,
  executionResult: poolResultSchema.omit({ poolId: true }),
});
export type ExecutionResult = z.infer<typeof executionResultSchema>;

/** The item without its per-pool results: what the projector renders once (`record_json`). */
export const signalRecordSchema = z.object({
  signalId: z.string(),
  /** false when the platform gave the id (the body had none) */
  signalIdGiven: z.boolean(),
  source: z.enum(['text', 'structured']),
  /** the signalId of the signal this one follows up */
  replyTo: z.string().nullable(),
  /** the body as it arrived */
  body: z.unknown(),
  interpretation: interpretationSchema,
  ruleVersion: z.string(),
  /** null until executed */
  outcome: signalOutcomeSchema.nullable(),
  skipReason: z.string().nullable(),
  receivedAt: z.string(),
  executedAt: z.string().nullable(),
});

export const signalInboxItemSchema = signalRecordSchema.extend({ executionResults: z.array(executionResultSchema) });
export type SignalInboxItem = z.infer<typeof signalInboxItemSchema>;

export function renderedSignalRecord(received: SignalReceived, executed: SignalExecuted | null): string {
  return JSON.stringify(
    signalRecordSchema.parse({
      signalId: received.signalId,
      signalIdGiven: received.signalIdGiven,
      source: received.source,
      replyTo: received.replyTo ?? null,
      body: received.body,
      interpretation: received.interpretation,
      ruleVersion: received.interpretation.ruleVersion,
      outcome: executed?.outcome ?? null,
      skipReason: executed?.skipReason ?? null,
      receivedAt: received.receivedAt,
      executedAt: executed?.executedAt ?? null,
    }),
  );
}

/**
 * The results as the developer sees them: each pool's follower by its anonymized id (keyed with
 * the master secret), and only the fields named here, so a field added to the pool result later
 * is never shown by accident. `ids` caches the ids of one answer (a follower has a pool per signal).
 */
export function executionResultsOf(results: readonly PoolResult[], masterSecret: string, ids = new Map<string, string>()): ExecutionResult[] {
  return results.map((r) => {
    const pool = poolEndpointOf(r.poolId);
    const key = `${pool.agentId}:${pool.userId}`;
    let subscriberId = ids.get(key);
    if (subscriberId === undefined) {
      subscriberId = anonymizedSubscriberId(masterSecret, pool.agentId, pool.userId);
      ids.set(key, subscriberId);
    }
    return {
      subscriberId,
      walletContext: pool.walletContext,
      executionResult: {
        status: r.status,
        tradeIds: r.tradeIds,
        ...(r.skipReason !== undefined ? { skipReason: r.skipReason } : {}),
        ...(r.errorMessage !== undefined ? { errorMessage: r.errorMessage } : {}),
        ...(r.errorTags !== undefined ? { errorTags: r.errorTags } : {}),
      },
    };
  });
}

/** A rendered record with its results, as one inbox item's JSON (the record's text is kept as it was rendered). */
export const inboxItemJson = (recordJson: string, results: ExecutionResult[]): string =>
  `${recordJson.slice(0, -1)},"executionResults":${JSON.stringify(results)}}`;
