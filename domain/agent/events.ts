// Facts of the agent stream `agent-{agentId}`. Money is integer micro-USD; times are ISO strings
// taken from the command, never from a clock here.
import { z } from 'zod';
import { microUsdSchema } from '../shared/money.ts';
import { channelSchema, reviewRecordSchema, signalDetectionRuleSchema, signalExecutionDefaultsSchema, venueSchema } from './record.ts';

export const agentListedSchema = z.object({
  agentId: z.string(),
  developerId: z.string(),
  name: z.string(),
  description: z.string().optional(),
  strategyDescription: z.string().optional(),
  avatarUrl: z.string().optional(),
  tags: z.array(z.string()),
  monthlyPriceMicroUsd: microUsdSchema,
  successFeePercent: z.number(),
  maxBetaUsers: z.number().int().optional(),
  webhookUrl: z.string().optional(),
  connectedChannels: z.array(channelSchema),
  signalDetectionRule: signalDetectionRuleSchema.optional(),
  signalExecutionDefaults: signalExecutionDefaultsSchema.optional(),
  membershipGated: z.boolean(),
  externalSignupUrl: z.string().optional(),
  venue: venueSchema,
  /** PERP_VENUE only */
  maxLeverage: z.number().int().optional(),
  minAllocationMicroUsd: microUsdSchema,
  minTradeMicroUsd: microUsdSchema,
  minPerTradePercent: z.number(),
  recommendedPerTradePercent: z.number(),
  maxConcurrentPositions: z.number().int(),
  maxEntriesPerTrade: z.number().int(),
  /** AES-256-GCM ciphertext of the inbound signing secret (infra/secrets.ts); the plaintext never enters an event */
  signingSecretCiphertext: z.string(),
  listedAt: z.string(),
});
export type AgentListed = z.infer<typeof agentListedSchema>;

export const agentApprovedSchema = z.object({ review: reviewRecordSchema, betaStartDate: z.string() });
export const agentReviewedSchema = z.object({ review: reviewRecordSchema });
export const agentResubmittedSchema = z.object({ resubmittedAt: z.string(), notes: z.string() });
/** The developer's edit of how the agent's signals are read and executed: each field present replaces the old one. */
export const agentSignalSettingsUpdatedSchema = z.object({
  signalDetectionRule: signalDetectionRuleSchema.optional(),
  signalExecutionDefaults: signalExecutionDefaultsSchema.optional(),
  updatedAt: z.string(),
});

/** The agent's developer or an administrator removed it: it leaves the listings, takes no signal and no follow; its events stay. */
export const agentDeletedSchema = z.object({ deletedAt: z.string() });

/**
 * The developer stopped (or restarted) sending developer webhooks to the agent's webhookUrl: its
 * events queue meanwhile (docs/decisions.md, Developer webhooks).
 */
export const agentWebhookDisabledSchema = z.object({
  disabledAt: z.string(),
  /** `failing`: the webhook worker gave up an event after 3 days of failures (absent: the developer) */
  reason: z.literal('failing').optional(),
});
export const agentWebhookEnabledSchema = z.object({ enabledAt: z.string() });

/** The agent stream's facts (its beta seats live in shard streams: seats.ts). */
export const agentEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('AgentListed'), data: agentListedSchema }),
  z.object({ type: z.literal('AgentApproved'), data: agentApprovedSchema }),
  z.object({ type: z.literal('AgentRejected'), data: agentReviewedSchema }),
  z.object({ type: z.literal('AgentPromoted'), data: agentReviewedSchema }),
  z.object({ type: z.literal('AgentResubmitted'), data: agentResubmittedSchema }),
  z.object({ type: z.literal('AgentSignalSettingsUpdated'), data: agentSignalSettingsUpdatedSchema }),
  z.object({ type: z.literal('AgentDeleted'), data: agentDeletedSchema }),
  z.object({ type: z.literal('AgentWebhookDisabled'), data: agentWebhookDisabledSchema }),
  z.object({ type: z.literal('AgentWebhookEnabled'), data: agentWebhookEnabledSchema }),
]);
export type AgentEvent = z.infer<typeof agentEventSchema>;
export const agentEventTypes: ReadonlySet<string> = new Set(agentEventSchema.options.map((o) => o.shape.type.value));
