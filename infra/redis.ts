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

type Counting = Redis & { countInWindow(keys: number, ...args: Array<string | number>): Promise<number[]> };
const counting = new WeakSet<Redis>();

/**
 * Counts one more under the key (or each key), a fixed window's counter: a key's first count gives
 * it its window's expiry (`windowMs`). One script, so a counter is never left without its expiry by
 * a failure between the two commands. Answers the key's count (each key's, in the order of `keys`).
 */
export async function countInWindow(redis: Redis, key: string, windowMs: number): Promise<number>;
export async function countInWindow(redis: Redis, keys: readonly string[], windowMs: number): Promise<number[]>;
export async function countInWindow(redis: Redis, keys: string | readonly string[], windowMs: number): Promise<number | number[]> {
  if (!counting.has(redis)) {
    redis.defineCommand('countInWindow', { lua: COUNT_IN_WINDOW });
    counting.add(redis);
  }
  const list = typeof keys === 'string' ? [keys] : keys;
  const counts = await (redis as Counting).countInWindow(list.length, ...list, windowMs);
  return typeof keys === 'string' ? counts[0]! : counts;
}
