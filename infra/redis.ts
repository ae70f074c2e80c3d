import { Redis } from 'ioredis';

/** How long a command of the service's own connection may take before it fails (503 to the caller). */
const REDIS_COMMAND_TIMEOUT_MS = 2_000;

/**
 * The service's own Redis connection (login codes, throttles, signatures spent, MFA, deferred
 * writes; BullMQ has connections of its own, `bullConnection`). Bounded, so an outage never stalls
 * requests: a command fails after one reconnection attempt or REDIS_COMMAND_TIMEOUT_MS, and the
 * request answers 503 SERVICE_UNAVAILABLE (api/plugins/errors.ts) instead of waiting for Redis.
 */
export function createRedis(url: string, keyPrefix?: string): Redis {
  return new Redis(url, { keyPrefix, maxRetriesPerRequest: 1, commandTimeout: REDIS_COMMAND_TIMEOUT_MS, lazyConnect: false });
}

/** Whether an error is Redis not answering (down, unreachable, too slow), rather than a fault of the request or the code. */
export function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    error.name === 'MaxRetriesPerRequestError' ||
    error.message === 'Command timed out' ||
    error.message === 'Connection is closed.' ||
    error.message.startsWith("Stream isn't writeable")
  );
}

// KEYS: the counters. ARGV: the window in ms. Answers each key's count after this one.
const COUNT_IN_WINDOW = `local counts = {}
for i, key in ipairs(KEYS) do
  local n = redis.call('INCR', key)
  if n == 1 then redis.call('PEXPIRE', key, ARGV[1]) end
  counts[i] = n
end
return counts`;

/** A script's command, per connection: sent by its digest (EVALSHA; ioredis loads it again if Redis lost it), not as its text with every call. */
type ScriptCall = (...args: Array<string | number>) => Promise<unknown>;
const scripts = new WeakMap<object, Map<string, ScriptCall>>();

/**
 * `lua` as a command of `redis`'s (defined once per connection, under `name`), called with its
 * `numberOfKeys` keys first, then its arguments (null: a number of keys each call gives first): the
 * one way our Redis scripts are sent.
 */
export function scriptCommand(redis: Pick<Redis, 'defineCommand'>, name: string, lua: string, numberOfKeys: number | null): ScriptCall {
  let defined = scripts.get(redis);
  if (!defined) scripts.set(redis, (defined = new Map()));
  let call = defined.get(name);
  if (!call) {
    redis.defineCommand(name, numberOfKeys === null ? { lua } : { numberOfKeys, lua });
    const method = (redis as unknown as Record<string, ScriptCall>)[name]!;
    call = method.bind(redis);
    defined.set(name, call);
  }
  return call;
}

/**
 * Counts one more under the key (or each key), a fixed window's counter: a key's first count gives
 * it its window's expiry (`windowMs`). One script, so a counter is never left without its expiry by
 * a failure between the two commands. Answers the key's count (each key's, in the order of `keys`).
 */
export async function countInWindow(redis: Redis, key: string, windowMs: number): Promise<number>;
export async function countInWindow(redis: Redis, keys: readonly string[], windowMs: number): Promise<number[]>;
export async function countInWindow(redis: Redis, keys: string | readonly string[], windowMs: number): Promise<number | number[]> {
  const list = typeof keys === 'string' ? [keys] : keys;
  const counts = (await scriptCommand(redis, 'countInWindow', COUNT_IN_WINDOW, null)(list.length, ...list, windowMs)) as number[];
  return typeof keys === 'string' ? counts[0]! : counts;
}

/** A pub/sub channel under the client's key prefix (Redis does not prefix channels): two deployments sharing a Redis never hear each other. */
export const prefixedChannel = (redis: Redis, name: string): string => `${redis.options.keyPrefix ?? ''}${name}`;

/** A subscription whose listener must know when messages may have been missed. */
export interface ConfirmedSubscription {
  /** Redis confirmed the subscription and the connection has not closed since: no message was missed meanwhile */
  live(): boolean;
  close(): void;
}

/**
 * `channel` heard on a connection of its own, subscribed again by hand on every (re)connection so that `live()` follows Redis's
 * own confirmation: `connected` when the connection is ready (before subscribing), `confirmed` once Redis confirmed, `lost` when
 * it closes; what was published while not live is lost.
 */
export function confirmedSubscription(
  redis: Redis,
  channel: string,
  on: { message(raw: string): void; connected?(): void; confirmed?(): void; lost?(): void },
  onerror: (error: Error) => void,
): ConfirmedSubscription {
  let live = false;
  const subscriber = redis.duplicate({ keyPrefix: undefined, commandTimeout: undefined, autoResubscribe: false });
  subscriber.on('error', onerror);
  subscriber.on('message', (_channel: string, raw: string) => on.message(raw));
  subscriber.on('ready', () => {
    on.connected?.();
    subscriber.subscribe(channel).then(() => {
      live = true;
      on.confirmed?.();
    }, onerror);
  });
  subscriber.on('close', () => {
    live = false;
    on.lost?.();
  });
  return { live: () => live, close: () => subscriber.disconnect() };
}
