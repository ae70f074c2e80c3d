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
