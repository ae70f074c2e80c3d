// Frees a beta seat that a follow took before it stopped, leaving no pool. The transfer recovery
// worker dispatches it after a grace period; the facts it decides on are read from the streams.
import { poolFolder, poolId, poolStream } from '../../domain/pool/state.ts';
import { walletContexts } from '../../domain/wallet/events.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import { releaseBetaSeat } from '../agents/beta-seat.ts';
import { load, type CommandContext } from '../handle.ts';
import { walletDebits } from './complete-transfer.ts';

/**
 * Releases the user's seat of the agent unless the user follows it in some wallet context, or a
 * debit for one of those pools waits to be credited (the transfer recovery will open that pool, so
 * the seat is the follower's). Undefined when the seat stays; no seat, no event.
 */
export async function releaseOrphanSeat(store: EventStore, agentId: string, userId: string, ctx: CommandContext) {
  const ids = walletContexts.map((context) => poolId(userId, agentId, context));
  const pools = await Promise.all(ids.map((id) => load(store, poolStream(id), poolFolder)));
  if (pools.some((p) => p.state.followed)) return undefined;
  // None of the pools exists, so every debit for one of them is still uncredited.
  const debits = await walletDebits(store, userId);
  if (debits.some((d) => ids.includes(d.data.poolId))) return undefined;
  return releaseBetaSeat(store, agentId, userId, ctx);
}
