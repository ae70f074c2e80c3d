// A short mutual exclusion across API processes, in Redis, for a check on a read model followed by
// the write it guards (a count, then a creation): while one holder runs, the others wait their turn
// (polling, so no database connection is held while waiting). Bounded both ways: a holder that dies
// frees it after `holdMs`; a caller that cannot take it within `waitMs` is refused 503 BUSY.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { refuse } from '../domain/shared/errors.ts';

const POLL_MS = 20;
// KEYS: the lock. ARGV: the holder's token. Deletes it only while it is still this holder's.
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function withMutex<T>(redis: Redis, name: string, options: { holdMs: number; waitMs: number }, fn: () => Promise<T>): Promise<T> {
  const key = `mutex:${name}`;
  const token = randomBytes(16).toString('hex');
  const giveUpAt = performance.now() + options.waitMs;
  while ((await redis.set(key, token, 'PX', options.holdMs, 'NX')) !== 'OK') {
    if (performance.now() >= giveUpAt) throw refuse('BUSY', 'another change of the same records is running: retry shortly', { retryAfterSeconds: 1 });
    await sleep(POLL_MS);
  }
  try {
    return await fn();
  } finally {
    await redis.eval(RELEASE, 1, key, token);
  }
}
