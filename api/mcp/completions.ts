// Completions (`completion/complete`) for the prompts' arguments and the resource templates'
// variables: agent ids from the marketplace's followable agents, wallet contexts, and the agents of
// the caller's own pools (only with the pool scope, as reading them needs). At most 100 values, as
// the protocol allows; `hasMore` tells the client to type more.
import { followableAgentIdsStartingWith } from '../../projections/agents/queries.ts';
import { walletContextSchema } from '../../domain/wallet/events.ts';
import type { McpToolContext } from './tool.ts';
import { POOL_SCOPE, userPools } from './resources.ts';

/** The protocol's cap on one completion's values. */
export const MAX_COMPLETIONS = 100;

const WALLET_CONTEXTS = walletContextSchema.options;

export const completeWalletContext = (value: string) => WALLET_CONTEXTS.filter((c) => c.startsWith(value));

/** Followable agents' ids starting with what was typed (a longer prefix narrows them). */
export const completeAgentId = (ctx: McpToolContext) => (value: string) => followableAgentIdsStartingWith(ctx.deps.pool, value.slice(0, 100), MAX_COMPLETIONS);

/** The agents of the caller's own pools, in the wallet context already chosen (if any): none without the pool scope. */
export const completePoolAgentId = (ctx: McpToolContext) => async (value: string, context?: { arguments?: Record<string, string> }) => {
  if (!ctx.identity.scopes.includes(POOL_SCOPE)) return [];
  const walletContext = walletContextSchema.safeParse(context?.arguments?.walletContext);
  const pools = await userPools(ctx, walletContext.success ? walletContext.data : undefined);
  return [...new Set(pools.map((p) => p.agent).filter((agent) => agent.startsWith(value)))].slice(0, MAX_COMPLETIONS);
};
