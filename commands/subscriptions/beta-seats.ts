// Taking and giving back beta seat claims among the agent's seat shards (domain/agent/seats.ts).
import { homeShard, seatShardDecider, seatShardId, shardCapacities, type ListedAgent, type SeatClaim } from '../../domain/agent/index.ts';
import { DomainError, refuse } from '../../domain/shared/errors.ts';
import type { Tools } from '../tools.ts';

async function shardsOf(tools: Tools, agentId: string, maxBetaUsers: number | undefined) {
  const capacities = shardCapacities(maxBetaUsers);
  const shards = await Promise.all(capacities.map((_, k) => tools.load(seatShardDecider, seatShardId(agentId, k))));
  return capacities.map((capacity, k) => ({ k, capacity, state: shards[k]!.state }));
}

/**
 * Takes `claimId` for `userId`: in the shard where the user holds a seat already (no second seat),
 * else the home shard first, then the next ones; BETA_FULL when every shard is full. Each shard
 * decides on its own fresh state, so a seat freed meanwhile is taken again only if there is room.
 * The claims of one user and agent run one at a time in this process, so two tabs cannot take two
 * seats in two shards.
 */
export function takeSeatClaim(tools: Tools, agent: ListedAgent, userId: string, claimId: string): Promise<void> {
  return tools.exclusively(`beta-seat:${agent.id}:${userId}`, async () => {
    const shards = await shardsOf(tools, agent.id, agent.maxBetaUsers);
    const home = shards.findIndex((s) => s.state.claims.has(userId));
    const first = home >= 0 ? home : homeShard(userId, shards.length);
    for (let i = 0; i < shards.length; i++) {
      const { k, capacity, state } = shards[(first + i) % shards.length]!;
      if (!state.claims.has(userId) && state.holders.length >= capacity) continue;
      try {
        await tools.execute(seatShardDecider, seatShardId(agent.id, k), { type: 'TakeBetaSeat', data: { agentId: agent.id, userId, capacity, claimId } });
        return;
      } catch (err) {
        // Filled meanwhile (decided on the shard's fresh state): the next shard.
        if (!(err instanceof DomainError && err.reason === 'BETA_FULL')) throw err;
      }
    }
    throw refuse('BETA_FULL', `all ${agent.maxBetaUsers} beta seats of this agent are taken`);
  });
}

/** The user's claims, by the shard that holds them. */
export async function claimsHeld(tools: Tools, agent: ListedAgent, userId: string): Promise<Array<{ k: number; claims: readonly SeatClaim[] }>> {
  const shards = await shardsOf(tools, agent.id, agent.maxBetaUsers);
  return shards.flatMap(({ k, state }) => {
    const claims = state.claims.get(userId);
    return claims ? [{ k, claims }] : [];
  });
}

/** Gives back `claimIds` of the user held in shard `k`. */
export async function releaseClaims(tools: Tools, agentId: string, userId: string, k: number, claimIds: readonly string[]): Promise<void> {
  for (const claimId of claimIds) {
    await tools.execute(seatShardDecider, seatShardId(agentId, k), { type: 'ReleaseBetaSeat', data: { agentId, userId, claimId } });
  }
}
