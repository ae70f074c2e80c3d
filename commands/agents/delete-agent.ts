// An agent's developer or an administrator deletes it (docs/domain-rules.md, `DELETE /api/v1/agents/{id}`):
// open trades refuse it (AGENT_HAS_OPEN_TRADES) unless `closeActiveTrades` closes each at the venue's price first; the
// agent is then deleted (no listing, follow or signal) and every follower pool is paused, its
// capital still withdrawable. A repeat after a crash goes on where the first one stopped.
import { agentDecider } from '../../domain/agent/index.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import type { FollowedPool } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { DomainError, refuse } from '../../domain/shared/errors.ts';
import { tradeDecider } from '../../domain/trade/decide.ts';
import type { Tools } from '../tools.ts';
import { markPriceOf } from '../market/mark-price.ts';
import { manageTrade } from '../trades/manage.ts';
import type { DeleteAgentData, DeleteAgentResult } from './commands.ts';

async function followedPools(tools: Tools, poolIds: string[]): Promise<FollowedPool[]> {
  const pools = await Promise.all(poolIds.map((id) => tools.load(poolDecider, id)));
  return pools.flatMap(({ state }) => (state.followed ? [state] : []));
}

/** Closes a trade at the venue's price (a pending entry is cancelled); its margin and PnL go back to the pool. */
async function closeTrade(tools: Tools, tradeId: string): Promise<void> {
  const { state } = await tools.load(tradeDecider, tradeId);
  if (state.status !== 'open' && state.status !== 'pending') return;
  const price = await markPriceOf(tools, state.token);
  if (price === null) throw refuse('NO_MARK_PRICE', `the venue has no price for ${state.token}: its trades cannot be closed at market now`);
  await manageTrade(tools, tradeId, { type: 'ClosePosition', data: { closePercent: 100, price, reason: 'AGENT_DELETED' } });
}

export async function deleteAgent({ data }: Command<'DeleteAgent', DeleteAgentData>, tools: Tools): Promise<DeleteAgentResult> {
  const { state: agent } = await tools.load(agentDecider, data.agentId);
  if (!agent.exists) throw refuse('AGENT_NOT_FOUND', 'no such agent');
  if (agent.developerId !== data.caller.userId && !data.caller.isAdmin)
    throw refuse('NOT_AGENT_OWNER', "only the agent's developer or an administrator can delete it");
  const pools = await followedPools(tools, data.poolIds);
  const openTrades = pools.flatMap((p) => Object.keys(p.openTrades));
  // Deleted and nothing left to do: gone (a repeat after a crash finishes what the first left).
  if (agent.deletedAt !== undefined && openTrades.length === 0 && pools.every((p) => p.settings.isPaused)) throw refuse('AGENT_NOT_FOUND', 'no such agent');
  if (openTrades.length > 0 && !data.closeActiveTrades) {
    throw refuse(
      'AGENT_HAS_OPEN_TRADES',
      `the agent has ${openTrades.length} open trades in its followers' pools: close them first or pass closeActiveTrades=true`,
      { openTrades: openTrades.length },
    );
  }
  // Deleted first, so no signal opens a trade while the open ones close.
  await tools.execute(agentDecider, data.agentId, { type: 'DeleteAgent', data: {} });
  for (const tradeId of openTrades) await closeTrade(tools, tradeId);
  let affected = 0;
  for (const pool of pools) {
    affected += 1;
    if (pool.settings.isPaused) continue;
    const { agentId, userId, walletContext, terms } = pool;
    const pause = { agentId, userId, walletContext, terms, settings: { ...pool.settings, isPaused: true }, topsUp: pool.openings ?? 0 };
    // A pool its user stopped meanwhile has nothing to pause (the pause never reopens it).
    await tools.execute(poolDecider, pool.poolId, { type: 'FollowAgent', data: pause }).catch((err: unknown) => {
      if (!(err instanceof DomainError && err.reason === 'SUBSCRIPTION_NOT_FOUND')) throw err;
    });
  }
  return { agentId: data.agentId, affectedBotCount: affected, activeTradesClosed: openTrades.length };
}
