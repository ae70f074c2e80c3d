import { z } from 'zod';
import {
  agentDecider,
  channelInputSchema,
  MAX_LEVERAGE,
  MAX_SUCCESS_FEE_PERCENT,
  signalExecutionDefaultsSchema,
  venueSchema,
  type AgentState,
} from '../../domain/agent/index.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import { signalDetectionRuleInputSchema } from '../../domain/signal/index.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { AGENT_SIGNING_SECRET, encryptSecret } from '../../infra/secrets.ts';
import type { Tools } from '../dispatch.ts';
import { visibleName } from '../../domain/shared/text.ts';

const MAX_USD = 1_000_000_000;
const url = (field: string) => z.url({ message: `${field} must be a valid URL` }).max(2000);
const usd = (field: string) =>
  z.number({ message: `${field} must be a number` }).min(0, `${field} must not be negative`).max(MAX_USD, `${field} is too large`);
const percent = (field: string, max = 100) =>
  z.number({ message: `${field} must be a number` }).min(0, `${field} must be between 0 and ${max}`).max(max, `${field} must be between 0 and ${max}`);
const count = (field: string) =>
  z.number({ message: `${field} must be a number` }).int(`${field} must be a whole number`).min(1, `${field} must be at least 1`).max(1000, `${field} must be at most 1000`);

/** What a developer sends to list an agent (USD amounts as numbers, like every API amount). */
export const listAgentInput = z
  .object({
    name: visibleName('name', { min: 1, max: 80 }),
    description: z.string().max(2000, 'description must be at most 2000 characters').optional(),
    strategyDescription: z.string().max(5000, 'strategyDescription must be at most 5000 characters').optional(),
    avatarUrl: url('avatarUrl').optional(),
    tags: z.array(visibleName('tag', { min: 1, max: 40 }), { message: 'tags must be an array of strings' }).max(20, 'at most 20 tags').default([]),
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

/**
 * The caller lists a new agent, which starts in pending-review; listing makes the caller a
 * developer. The listing is decided before the role is granted, so a refused listing grants
 * nothing; the grant is idempotent and comes first, so a listing whose append then fails (the
 * store went away) leaves only the role, which a retry of the listing finds granted.
 */
export async function listAgent(
  { data }: Command<'ListAgent', { developerId: string; input: ListAgentInput }>,
  tools: Tools,
): Promise<ListedAgentResult> {
  const { ids, config } = tools.deps;
  const { developerId, input } = data;
  const agentId = ids.uuid();
  const signingSecret = `whsec_${ids.token(32)}`;
  const { minAllocationUsd, minTradeUsd, monthlyPrice, ...rest } = input;
  const listed = {
    ...rest,
    agentId,
    developerId,
    monthlyPriceMicroUsd: usdToMicro(monthlyPrice),
    minAllocationMicroUsd: usdToMicro(minAllocationUsd),
    minTradeMicroUsd: usdToMicro(minTradeUsd),
    signingSecretCiphertext: encryptSecret(signingSecret, config.JWT_SECRET, AGENT_SIGNING_SECRET),
  };
  const listing = { type: 'ListAgent', data: listed } as const;
  await tools.preview(agentDecider, agentId, listing);
  await tools.dispatch('GrantRole', { user: { userId: developerId }, role: 'developer', reason: 'agent_listed' });
  const result = await tools.execute(agentDecider, agentId, listing);
  return { agentId, signingSecret, agent: result.state };
}
