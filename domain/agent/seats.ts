// Beta seats, exact but not one hot stream: an agent's `maxBetaUsers` seats are split over
// SEAT_SHARDS streams `betaseats-{agentId}.{shard}`, each holding at most its share. A follower
// tries their home shard first (a hash of the user id), then the others; each shard decides under
// its own expected revision, so the shards never hold more than `maxBetaUsers` together, and
// followers of one agent contend on sixteen streams instead of one.
import { z } from 'zod';
import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { refuse } from '../shared/errors.ts';

export const SEAT_SHARDS = 16;

export const seatShardStream = (id: string): string => `betaseats-${id}`;
/** `{agentId}.{shard}`: agent ids are UUIDs, so the id is unambiguous. */
export const seatShardId = (agentId: string, shard: number): string => `${agentId}.${shard}`;

/**
 * The seats of each shard: `maxBetaUsers` split as evenly as possible (the first shards take the
 * remainder), only as many shards as seats; an uncapped beta counts its seats without a limit.
 */
export function shardCapacities(maxBetaUsers: number | undefined): number[] {
  if (maxBetaUsers === undefined) return Array.from({ length: SEAT_SHARDS }, () => Infinity);
  const shards = Math.min(SEAT_SHARDS, maxBetaUsers);
  return Array.from({ length: shards }, (_, k) => Math.floor(maxBetaUsers / shards) + (k < maxBetaUsers % shards ? 1 : 0));
}

/** The shard a user tries first: FNV-1a of the user id, so one user's follows meet on one stream. */
export function homeShard(userId: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < userId.length; i++) h = Math.imul(h ^ userId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % shards;
}

export const betaSeatSchema = z.object({ agentId: z.string(), userId: z.string(), at: z.string() });

export const seatEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('BetaSeatTaken'), data: betaSeatSchema }),
  z.object({ type: z.literal('BetaSeatReleased'), data: betaSeatSchema }),
]);
export type SeatEvent = z.infer<typeof seatEventSchema>;

export interface SeatShard {
  holders: readonly string[];
}

export type SeatCommand =
  /** `capacity`: this shard's share of `maxBetaUsers` (shardCapacities) */
  | Command<'TakeBetaSeat', { agentId: string; userId: string; capacity: number }>
  | Command<'ReleaseBetaSeat', { agentId: string; userId: string }>;

function evolve(state: SeatShard, event: SeatEvent): SeatShard {
  switch (event.type) {
    case 'BetaSeatTaken':
      return { holders: [...state.holders, event.data.userId] };
    case 'BetaSeatReleased':
      return { holders: state.holders.filter((u) => u !== event.data.userId) };
    default:
      return assertNever(event);
  }
}

/** Taking a seat twice is a no-op (a retried follow never counts a user twice); a full shard refuses. */
function decide(command: SeatCommand, state: SeatShard): SeatEvent[] {
  const { agentId, userId } = command.data;
  const at = command.metadata.now.toISOString();
  switch (command.type) {
    case 'TakeBetaSeat':
      if (state.holders.includes(userId)) return [];
      if (state.holders.length >= command.data.capacity) throw refuse('BETA_FULL', 'this share of the beta seats is taken');
      return [{ type: 'BetaSeatTaken', data: { agentId, userId, at } }];
    case 'ReleaseBetaSeat':
      if (!state.holders.includes(userId)) return [];
      return [{ type: 'BetaSeatReleased', data: { agentId, userId, at } }];
    default:
      return assertNever(command);
  }
}

export const seatShardDecider: Aggregate<SeatCommand, SeatShard, SeatEvent> = {
  streamOf: seatShardStream,
  initialState: () => ({ holders: [] }),
  evolve,
  decide,
};
