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

/**
 * What keeps a seat held: a follow that opens (or is about to open) one of the user's pools of the
 * agent claims it, and the pool remembers the claim it opened with. The user holds the seat while
 * any claim is held, so a stop that gives back its own opening's claim cannot free a seat that a
 * follow in flight still counts on. Seats taken before claims existed hold UNNAMED_CLAIM.
 */
export const UNNAMED_CLAIM = 'unnamed';

/**
 * A claim is named after the transfer that opens the pool (so a debit waiting for its credit shows
 * which claim it keeps) and made unique by a nonce (two follows planning the same transfer hold two
 * claims, and each gives back only its own).
 */
export const seatClaimId = (transferId: string, nonce: string): string => `${transferId}@${nonce}`;
export const transferOfClaim = (claimId: string): string => claimId.slice(0, claimId.lastIndexOf('@'));

/** `claimId`: absent on events written before seats were held by claims (UNNAMED_CLAIM). */
export const betaSeatSchema = z.object({ agentId: z.string(), userId: z.string(), at: z.string(), claimId: z.string().min(1).optional() });
const seatClaimSchema = z.object({ agentId: z.string(), userId: z.string(), at: z.string(), claimId: z.string().min(1) });

/**
 * BetaSeatTaken: a user without a seat takes one with its first claim; BetaSeatReleased: the last
 * claim goes back and the seat with it (without a claim id: every claim, as before claims). A user
 * holding a seat adds and gives back further claims without taking or freeing a seat.
 */
export const seatEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('BetaSeatTaken'), data: betaSeatSchema }),
  z.object({ type: z.literal('BetaSeatReleased'), data: betaSeatSchema }),
  z.object({ type: z.literal('BetaSeatClaimAdded'), data: seatClaimSchema }),
  z.object({ type: z.literal('BetaSeatClaimReleased'), data: seatClaimSchema }),
]);
export type SeatEvent = z.infer<typeof seatEventSchema>;

export interface SeatClaim {
  claimId: string;
  /** when it was taken: the recovery gives back a claim nothing holds only after its grace period */
  at: string;
}

export interface SeatShard {
  /** the users holding a seat of this shard, in the order they took it */
  holders: readonly string[];
  /** each holder's claims (at least one) */
  claims: ReadonlyMap<string, readonly SeatClaim[]>;
}

export type SeatCommand =
  /** `capacity`: this shard's share of `maxBetaUsers` (shardCapacities) */
  | Command<'TakeBetaSeat', { agentId: string; userId: string; capacity: number; claimId: string }>
  | Command<'ReleaseBetaSeat', { agentId: string; userId: string; claimId: string }>;

function withClaims(state: SeatShard, userId: string, claims: readonly SeatClaim[]): SeatShard {
  const next = new Map(state.claims);
  if (claims.length === 0) {
    next.delete(userId);
    return { holders: state.holders.filter((u) => u !== userId), claims: next };
  }
  next.set(userId, claims);
  return { holders: state.claims.has(userId) ? state.holders : [...state.holders, userId], claims: next };
}

function evolve(state: SeatShard, event: SeatEvent): SeatShard {
  const { userId, at } = event.data;
  const held = state.claims.get(userId) ?? [];
  switch (event.type) {
    case 'BetaSeatTaken':
    case 'BetaSeatClaimAdded':
      return withClaims(state, userId, [...held, { claimId: event.data.claimId ?? UNNAMED_CLAIM, at }]);
    case 'BetaSeatReleased':
      return withClaims(state, userId, []);
    case 'BetaSeatClaimReleased':
      return withClaims(
        state,
        userId,
        held.filter((c) => c.claimId !== event.data.claimId),
      );
    default:
      return assertNever(event);
  }
}

/**
 * Taking a claim held already is a no-op (a retried follow never counts twice); a user holding a
 * seat here adds the claim without taking another; otherwise a full shard refuses. Giving back a
 * claim not held is a no-op; the user's last claim frees the seat.
 */
function decide(command: SeatCommand, state: SeatShard): SeatEvent[] {
  const { agentId, userId, claimId } = command.data;
  const at = command.metadata.now.toISOString();
  const held = state.claims.get(userId) ?? [];
  const data = { agentId, userId, at, claimId };
  switch (command.type) {
    case 'TakeBetaSeat':
      if (held.some((c) => c.claimId === claimId)) return [];
      if (held.length > 0) return [{ type: 'BetaSeatClaimAdded', data }];
      if (state.holders.length >= command.data.capacity) throw refuse('BETA_FULL', 'this share of the beta seats is taken');
      return [{ type: 'BetaSeatTaken', data }];
    case 'ReleaseBetaSeat':
      if (!held.some((c) => c.claimId === claimId)) return [];
      return [{ type: held.length === 1 ? 'BetaSeatReleased' : 'BetaSeatClaimReleased', data }];
    default:
      return assertNever(command);
  }
}

export const seatShardDecider: Aggregate<SeatCommand, SeatShard, SeatEvent> = {
  streamOf: seatShardStream,
  initialState: () => ({ holders: [], claims: new Map() }),
  evolve,
  decide,
};
