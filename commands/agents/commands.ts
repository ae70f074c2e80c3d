// The agents area's commands (list, review, update, delete): their input schemas, data and results.
// No handler: routes and tests name them here (commands/command-map.ts joins every area).
import { z } from 'zod';
import {
  channelInputSchema,
  MAX_LEVERAGE,
  MAX_SUCCESS_FEE_PERCENT,
  signalExecutionDefaultsSchema,
  venueSchema,
  type AgentState,
  type ReviewDecision,
} from '../../domain/agent/index.ts';
import { signalDetectionRuleInputSchema } from '../../domain/signal/index.ts';
import { visibleName } from '../../domain/shared/text.ts';

const MAX_USD = 1_000_000_000;
const url = (field: string) => z.url({ message: `${field} must be a valid URL` }).max(2000);
const usd = (field: string) =>
  z
    .number({ message: `${field} must be a number` })
    .min(0, `${field} must not be negative`)
    .max(MAX_USD, `${field} is too large`);
const percent = (field: string, max = 100) =>
  z
    .number({ message: `${field} must be a number` })
    .min(0, `${field} must be between 0 and ${max}`)
    .max(max, `${field} must be between 0 and ${max}`);
const count = (field: string) =>
  z
    .number({ message: `${field} must be a number` })
    .int(`${field} must be a whole number`)
    .min(1, `${field} must be at least 1`)
    .max(1000, `${field} must be at most 1000`);

/** What a developer sends to list an agent (USD amounts as numbers, like every API amount). */
export const listAgentInput = z
  .object({
    name: visibleName('name', { min: 1, max: 80 }),
    description: z.string().max(2000, 'description must be at most 2000 characters').optional(),
    strategyDescription: z.string().max(5000, 'strategyDescription must be at most 5000 characters').optional(),
    avatarUrl: url('avatarUrl').optional(),
    tags: z
      .array(visibleName('tag', { min: 1, max: 40 }), { message: 'tags must be an array of strings' })
      .max(20, 'at most 20 tags')
      .default([]),
    monthlyPrice: usd('monthlyPrice').default(0),
    successFeePercent: percent('successFeePercent', MAX_SUCCESS_FEE_PERCENT).default(0),
    maxBetaUsers: count('maxBetaUsers').optional(),
    webhookUrl: url('webhookUrl').optional(),
    connectedChannels: z.array(channelInputSchema).max(20, 'at most 20 connected channels').default([]),
    signalDetectionRule: signalDetectionRuleInputSchema.optional(),
    signalExecutionDefaults: signalExecutionDefaultsSchema.optional(),
    membershipGated: z.boolean().default(false),
    externalSignupUrl: url('externalSignupUrl').optional(),
    venue: venueSchema.default('SPOT_VENUE'),
    maxLeverage: z
      .number({ message: 'maxLeverage must be a number' })
      .int('maxLeverage must be a whole number')
      .min(1, `maxLeverage must be from 1 to ${MAX_LEVERAGE}`)
      .max(MAX_LEVERAGE, `maxLeverage must be from 1 to ${MAX_LEVERAGE}`)
      .optional(),
    minAllocationUsd: usd('minAllocationUsd').default(0),
    minTradeUsd: usd('minTradeUsd').default(0),
    minPerTradePercent: percent('minPerTradePercent').default(0),
    recommendedPerTradePercent: percent('recommendedPerTradePercent').default(10),
    maxConcurrentPositions: count('maxConcurrentPositions').default(10),
    maxEntriesPerTrade: count('maxEntriesPerTrade').default(3),
  })
  .superRefine((v, ctx) => {
    if (v.venue === 'PERP_VENUE' && v.maxLeverage === undefined) {
      ctx.addIssue({ code: 'custom', path: ['maxLeverage'], message: 'maxLeverage is required for PERP_VENUE' });
    }
    if (v.venue === 'SPOT_VENUE' && v.maxLeverage !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['maxLeverage'], message: 'maxLeverage is not allowed for SPOT_VENUE' });
    }
    if (v.recommendedPerTradePercent < v.minPerTradePercent) {
      ctx.addIssue({ code: 'custom', path: ['recommendedPerTradePercent'], message: 'recommendedPerTradePercent must not be below minPerTradePercent' });
    }
  });

export type ListAgentInput = z.infer<typeof listAgentInput>;

export interface ListedAgentResult {
  agentId: string;
  /** shown to the developer once, in the creation response; only its ciphertext is stored */
  signingSecret: string;
  agent: AgentState;
}

/** The administrator's body: the spec sends an empty object; notes and a safety score are optional. */
export const reviewBody = z.object({
  notes: z.string().max(5000, 'notes must be at most 5000 characters').optional(),
  safetyScore: z
    .number({ message: 'safetyScore must be a number' })
    .int('safetyScore must be a whole number')
    .min(0, 'safetyScore must be from 0 to 100')
    .max(100, 'safetyScore must be from 0 to 100')
    .optional(),
});

export type ReviewBody = z.infer<typeof reviewBody>;

export interface ReviewAgentData extends ReviewBody {
  agentId: string;
  decision: ReviewDecision;
}

export const updateAgentInput = z
  .object({
    signalDetectionRule: signalDetectionRuleInputSchema.optional(),
    signalExecutionDefaults: signalExecutionDefaultsSchema.optional(),
  })
  .strict()
  .refine((v) => v.signalDetectionRule !== undefined || v.signalExecutionDefaults !== undefined, {
    message: 'send signalDetectionRule, signalExecutionDefaults or both',
  });

export type UpdateAgentInput = z.infer<typeof updateAgentInput>;

export interface UpdateAgentData {
  agentId: string;
  developerId: string;
  input: UpdateAgentInput;
}

export interface SetWebhookDeliveryData {
  agentId: string;
  developerId: string;
  enabled: boolean;
  /** the webhook worker disables a webhook failing for 3 days (acting for the developer) */
  reason?: 'failing';
}

export interface DeleteAgentData {
  agentId: string;
  caller: { userId: string; isAdmin: boolean };
  closeActiveTrades: boolean;
  /** every pool that follows the agent (the route reads them from the subscriptions read model) */
  poolIds: string[];
}

export interface DeleteAgentResult {
  agentId: string;
  affectedBotCount: number;
  activeTradesClosed: number;
}

/** The agents area's commands: each one's data and result. */
export interface AgentCommands {
  ListAgent: { data: { developerId: string; input: ListAgentInput }; result: ListedAgentResult };
  ReviewAgent: { data: ReviewAgentData; result: { agent: AgentState } };
  UpdateAgent: { data: UpdateAgentData; result: { agent: AgentState } };
  DeleteAgent: { data: DeleteAgentData; result: DeleteAgentResult };
  SetWebhookDelivery: { data: SetWebhookDeliveryData; result: { agent: AgentState } };
}
