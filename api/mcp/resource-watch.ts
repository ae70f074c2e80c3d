// Who watches which resource, in Redis, and the change notices the projections send them. A 2025
// session subscribes to a resource through any process (`resources/subscribe`); when a committed
// projection batch touches the pool or agent behind it, `notifications/resources/updated` goes to
// the session's stream through the relay (api/mcp/relay.ts), whichever process holds it.
import type { Redis } from 'ioredis';
import { scriptCommand } from '../../infra/redis.ts';
import type { ServerEvent } from '@modelcontextprotocol/server';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import { sendToSession } from './relay.ts';

/**
 * What a resource URI watches: `agent:<agentId>` or `pool:<poolId>` (the pool id names its user, so
 * two users' `pool://virtual/<agent>` are different targets).
 */
export type WatchTarget = `agent:${string}` | `pool:${string}`;

/** Every target someone watches: one SMISMEMBER per committed batch tells whether there is anything to do. */
const WATCHED = 'mcp:watched';
/** Atomic, so a subscription made meanwhile (a MULTI) is never forgotten. */
const FORGET_UNWATCHED = "if redis.call('SCARD', KEYS[2]) == 0 then redis.call('SREM', KEYS[1], ARGV[1]) end";
const watchersKey = (target: WatchTarget) => `mcp:watchers:${target}`;
const subscriptionsKey = (sessionId: string) => `mcp:subscriptions:${sessionId}`;
const sessionKey = (sessionId: string) => `mcp:session:${sessionId}`;

/** The channel of the 2026 listen streams' bus (api/mcp/bus.ts), under the app's key prefix. */
export const BUS_CHANNEL = 'mcp:bus';

/** A change as the bus carries it: for a pool, whose it is (its URI is relative to its user). */
export type BusEvent = ServerEvent & { userId?: string };

const busEventOf = (target: WatchTarget): BusEvent => ({
  kind: 'resource_updated',
  uri: uriOf(target),
  ...(target.startsWith('pool:') ? { userId: target.slice('pool:'.length).split('.')[0] } : {}),
});

/** The URI a target is known by to its watchers. */
export function uriOf(target: WatchTarget): string {
  if (target.startsWith('agent:')) return `agent://${target.slice('agent:'.length)}`;
  const [, agentId, walletContext] = target.slice('pool:'.length).split('.');
  return `pool://${walletContext}/${agentId}`;
}

export async function watch(redis: Redis, ttlSeconds: number, sessionId: string, target: WatchTarget): Promise<void> {
  await redis
    .multi()
    .sadd(watchersKey(target), sessionId)
    .expire(watchersKey(target), ttlSeconds)
    .sadd(subscriptionsKey(sessionId), target)
    .expire(subscriptionsKey(sessionId), ttlSeconds)
    .sadd(WATCHED, target)
    .exec();
}

export async function unwatch(redis: Redis, sessionId: string, target: WatchTarget): Promise<void> {
  await redis.multi().srem(watchersKey(target), sessionId).srem(subscriptionsKey(sessionId), target).exec();
}

/** A session's lifetime starts again: its subscriptions live as long (one command when it has none). */
export async function touchSubscriptions(redis: Redis, ttlSeconds: number, sessionId: string): Promise<void> {
  if (!(await redis.expire(subscriptionsKey(sessionId), ttlSeconds))) return;
  const multi = redis.multi();
  for (const target of (await redis.smembers(subscriptionsKey(sessionId))) as WatchTarget[]) multi.expire(watchersKey(target), ttlSeconds);
  await multi.exec();
}

/** A session ends: its subscriptions go with it. */
export async function unwatchAll(redis: Redis, sessionId: string): Promise<void> {
  const targets = (await redis.smembers(subscriptionsKey(sessionId))) as WatchTarget[];
  const multi = redis.multi().del(subscriptionsKey(sessionId));
  for (const target of targets) multi.srem(watchersKey(target), sessionId);
  await multi.exec();
}

/** The targets a batch of events touches: a pool's events change the pool and its agent's figures; an agent's, the agent. */
export function targetsOf(events: readonly RecordedEvent[]): WatchTarget[] {
  const targets = new Set<WatchTarget>();
  for (const { streamName } of events) {
    if (streamName.startsWith('agent-')) targets.add(`agent:${streamName.slice('agent-'.length)}`);
    if (!streamName.startsWith('pool-')) continue;
    const poolId = streamName.slice('pool-'.length);
    targets.add(`pool:${poolId}`);
    targets.add(`agent:${poolId.split('.')[1]}`);
  }
  return [...targets];
}

/**
 * Tells the watchers of what `events` touched that it changed: one Redis command when nobody
 * watches any of it. A watcher whose session has ended is dropped here.
 */
export async function notifyChanged(redis: Redis, ttlSeconds: number, events: readonly RecordedEvent[]): Promise<void> {
  const targets = targetsOf(events);
  if (!targets.length) return;
  // One round trip: the 2026 listen streams' bus (a publish nobody listens to costs Redis nothing more), and the 2025 watchers.
  const [[, watched]] = (await redis
    .pipeline()
    .smismember(WATCHED, ...targets)
    .publish(`${redis.options.keyPrefix ?? ''}${BUS_CHANNEL}`, JSON.stringify(targets.map(busEventOf)))
    .exec()) as [[null, number[]], [null, number]];
  for (const target of targets.filter((_, i) => watched[i] === 1)) {
    const sessions = await redis.smembers(watchersKey(target));
    if (!sessions.length) {
      await scriptCommand(redis, 'forgetUnwatched', FORGET_UNWATCHED, 2)(WATCHED, watchersKey(target), target);
      continue;
    }
    const message = { jsonrpc: '2.0' as const, method: 'notifications/resources/updated', params: { uri: uriOf(target) } };
    for (const sessionId of sessions) {
      if (await redis.exists(sessionKey(sessionId))) await sendToSession(redis, ttlSeconds, sessionId, message);
      else await unwatchAll(redis, sessionId);
    }
  }
}
