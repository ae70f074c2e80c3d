import { agentDecider } from '../../domain/agent/index.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { webhookUrlRefusal } from '../../domain/webhook/delivery.ts';
import { AGENT_SIGNING_SECRET, encryptSecret } from '../../infra/secrets.ts';
import type { Tools } from '../tools.ts';
import type { ListAgentInput, ListedAgentResult } from './commands.ts';

/**
 * The caller lists a new agent, which starts in pending-review; listing makes the caller a
 * developer. The listing is decided before the role is granted, so a refused listing grants
 * nothing; the grant is idempotent and comes first, so a listing whose append then fails (the
 * store went away) leaves only the role, which a retry of the listing finds granted.
 */
export async function listAgent({ data }: Command<'ListAgent', { developerId: string; input: ListAgentInput }>, tools: Tools): Promise<ListedAgentResult> {
  const { ids, config } = tools.deps;
  const { developerId, input } = data;
  const webhookUrlProblem = input.webhookUrl === undefined ? undefined : webhookUrlRefusal(input.webhookUrl, config.WEBHOOK_ALLOW_LOOPBACK);
  if (webhookUrlProblem) throw refuse('VALIDATION_FAILED', webhookUrlProblem);
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
