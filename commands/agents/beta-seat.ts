import { agentFolder, agentStream, decide } from '../../domain/agent/index.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import { handle, type CommandContext } from '../handle.ts';

/**
 * A follower takes a seat of a beta agent (409 when full or not followable; nothing for a live
 * agent or a seat already held). The subscription flow calls it before opening the pool.
 */
export function takeBetaSeat(store: EventStore, agentId: string, userId: string, ctx: CommandContext) {
  return handle(
    store,
    agentStream(agentId),
    agentFolder,
    (state) => decide({ type: 'TakeBetaSeat', data: { userId }, metadata: { now: ctx.now } }, state),
    ctx,
  );
}

/** The follower stopped following: the seat is free for someone else. No seat, no event. */
export function releaseBetaSeat(store: EventStore, agentId: string, userId: string, ctx: CommandContext) {
  return handle(
    store,
    agentStream(agentId),
    agentFolder,
    (state) => decide({ type: 'ReleaseBetaSeat', data: { userId }, metadata: { now: ctx.now } }, state),
    ctx,
  );
}
