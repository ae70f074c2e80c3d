// The 2025-11-25 session streams across processes. A message for a session's standalone stream
// (`GET /mcp`, `GET /mcp/sse`) is appended to the session's event log in Redis (a capped Redis
// stream, its entry ids are the SSE event ids) and published on the session's channel; the
// process holding the stream forwards it. A client reconnecting with `Last-Event-ID` gets the
// entries after that id from the log, then the live ones. A session may hold several streams: each
// message goes out on one of them only (`claimDelivery`), and a resumed stream replays only what
// was delivered on it or on none.
import type { Redis } from 'ioredis';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

/** Events kept per session for resumption: a client away for longer than this many events misses the oldest. */
export const EVENT_LOG_LENGTH = 1000;
const EVENT_ID = /^\d{1,20}-\d{1,20}$/;

const logKey = (sessionId: string) => `mcp:events:${sessionId}`;
/** ioredis prefixes keys but not pub/sub channels: the channel carries the app's key prefix itself. */
const channelOf = (redis: Redis, sessionId: string) => `${redis.options.keyPrefix ?? ''}mcp:stream:${sessionId}`;

export interface StreamEvent {
  id: string;
  message: JSONRPCMessage;
}

/** Appends `message` to the session's log and publishes it to whichever process holds its stream. */
export async function sendToSession(redis: Redis, ttlSeconds: number, sessionId: string, message: JSONRPCMessage): Promise<string> {
  const data = JSON.stringify(message);
  const [[, id]] = (await redis
    .multi()
    .xadd(logKey(sessionId), 'MAXLEN', '~', EVENT_LOG_LENGTH, '*', 'm', data)
    .expire(logKey(sessionId), ttlSeconds)
    .exec()) as [[null, string], [null, number]];
  await redis.publish(channelOf(redis, sessionId), JSON.stringify({ id, message }));
  return id;
}

/** The session's logged events after `lastEventId` (exclusive), oldest first; none for an id not of ours. */
export async function eventsAfter(redis: Redis, sessionId: string, lastEventId: string): Promise<StreamEvent[]> {
  if (!EVENT_ID.test(lastEventId)) return [];
  const entries = await redis.xrange(logKey(sessionId), `(${lastEventId}`, '+');
  return entries.map(([id, fields]) => ({ id, message: JSON.parse(fields[1]!) as JSONRPCMessage }));
}

const claimKey = (sessionId: string, eventId: string) => `mcp:delivered:${sessionId}:${eventId}`;

/**
 * Whether the stream `streamId` delivers the session's event `eventId`: the first stream to claim
 * an event delivers it, so a session with several streams (on any processes) gets each message on
 * one of them only; the same stream (resumed) may deliver it again. The claim expires with the session.
 */
export async function claimDelivery(redis: Redis, ttlSeconds: number, sessionId: string, eventId: string, streamId: string): Promise<boolean> {
  const key = claimKey(sessionId, eventId);
  const [[, won], [, holder]] = (await redis.multi().set(key, streamId, 'EX', ttlSeconds, 'NX').get(key).exec()) as [
    [null, string | null],
    [null, string | null],
  ];
  return won === 'OK' || holder === streamId;
}

/** The stream that delivered `eventId`, if one did: a stream resuming after that event is that stream again. */
export const deliveredBy = (redis: Redis, sessionId: string, eventId: string): Promise<string | null> =>
  EVENT_ID.test(eventId) ? redis.get(claimKey(sessionId, eventId)) : Promise.resolve(null);

export const endSessionLog = (redis: Redis, sessionId: string) => redis.del(logKey(sessionId));
export const touchSessionLog = (redis: Redis, ttlSeconds: number, sessionId: string) => redis.expire(logKey(sessionId), ttlSeconds);

/** Whether stream id `a` comes after `b` (ids are `<ms>-<seq>`). */
export function isAfter(a: string, b: string): boolean {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  return am > bm || (am === bm && as > bs);
}

export interface Relay {
  /** Delivers the session's live events to `listener` until the returned function is called. */
  listen(sessionId: string, listener: (event: StreamEvent) => void): Promise<() => void>;
  /** Delivers what is published on `channel` (under the app's key prefix) until the returned function is called. */
  listenChannel(channel: string, listener: (raw: string) => void): Promise<() => void>;
  close(): void;
}

/**
 * This process's side of the relay: one subscriber connection (ioredis needs a connection of its
 * own in subscriber mode), opened with the first stream this process holds.
 */
export function createRelay(redis: Redis, onerror: (error: Error) => void): Relay {
  let subscriber: Redis | undefined;
  const listeners = new Map<string, Set<(raw: string) => void>>();
  const connection = () => {
    if (subscriber) return subscriber;
    subscriber = redis.duplicate({ keyPrefix: undefined, commandTimeout: undefined });
    subscriber.on('error', onerror);
    subscriber.on('message', (channel: string, raw: string) => {
      for (const listener of listeners.get(channel) ?? []) listener(raw);
    });
    return subscriber;
  };
  async function subscribe(channel: string, listener: (raw: string) => void) {
    const set = listeners.get(channel) ?? new Set();
    const first = set.size === 0;
    set.add(listener);
    listeners.set(channel, set);
    if (first) await connection().subscribe(channel);
    return () => {
      if (!set.delete(listener) || set.size > 0) return;
      listeners.delete(channel);
      subscriber?.unsubscribe(channel).catch(onerror);
    };
  }
  return {
    listen: (sessionId, listener) => subscribe(channelOf(redis, sessionId), (raw) => listener(JSON.parse(raw) as StreamEvent)),
    listenChannel: (channel, listener) => subscribe(`${redis.options.keyPrefix ?? ''}${channel}`, listener),
    close() {
      listeners.clear();
      subscriber?.disconnect();
      subscriber = undefined;
    },
  };
}
