// Taking and giving back a beta seat among the agent's seat shards (domain/agent/seats.ts).
import { homeShard, seatShardDecider, seatShardId, shardCapacities, type ListedAgent } from '../../domain/agent/index.ts';
import { DomainError, refuse } from '../../domain/shared/errors.ts';
import type { Tools } from '../dispatch.ts';

async function shardsOf(tools: Tools, agent: ListedAgent) {
  const capacities = shardCapacities(agent.maxBetaUsers);
  const shards = await Promise.all(capacities.map((_, k) => tools.load(seatShardDecider, seatShardId(agent.id, k))));
  return capacities.map((capacity, k) => ({ k, capacity, holders: shards[k]!.state.holders }));
}

/**
 * A seat for `userId`: none taken when the user holds one already; the home shard first, then the
 * next ones; BETA_FULL when every shard is full. Returns whether this call took a seat. The claims
 * of one user and agent run one at a time in this process, so two tabs cannot take two seats.
 */
export function takeBetaSeat(tools: Tools, agent: ListedAgent, userId: string): Promise<boolean> {
  return tools.exclusively(`beta-seat:${agent.id}:${userId}`, async () => {
    const shards = await shardsOf(tools, agent);
    if (shards.some((s) => s.holders.includes(userId))) return false;
    const home = homeShard(userId, shards.length);
    for (let i = 0; i < shards.length; i++) {
      const { k, capacity, holders } = shards[(home + i) % shards.length]!;
      if (holders.length >= capacity) continue;
      try {
        const taken = await tools.execute(seatShardDecider, seatShardId(agent.id, k), {
          type: 'TakeBetaSeat',
          data: { agentId: agent.id, userId, capacity },
        });
        return taken.events.length > 0;
      } catch (err) {
        // Filled meanwhile (decided on the shard's fresh state): the next shard.
        if (!(err instanceof DomainError && err.reason === 'BETA_FULL')) throw err;
      }
    }
    throw refuse('BETA_FULL', `all ${agent.maxBetaUsers} beta seats of this agent are taken`);
  });
}

/** Gives back the user's seat (in whichever shard holds it); returns whether one was held. */
export async function releaseBetaSeat(tools: Tools, agent: ListedAgent, userId: string): Promise<boolean> {
  const held = (await shardsOf(tools, agent)).filter((s) => s.holders.includes(userId));
  for (const { k } of held) {
    await tools.execute(seatShardDecider, seatShardId(agent.id, k), { type: 'ReleaseBetaSeat', data: { agentId: agent.id, userId } });
  }
  return held.length > 0;
}
