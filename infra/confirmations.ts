// Single-use confirmation handles of MCP money previews, in Redis (shared by every API process).
// The handle is a random token the caller holds; Redis keeps only its SHA-256 digest as the key, so
// neither a key listing nor a log line can replay a move. The record binds the handle to the user,
// the tool and the digest of the exact arguments previewed; one Lua script checks that binding,
// the expiry and deletes the record in one step, so of many parallel confirmations one consumes it.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { scriptCommand } from './redis.ts';
import type { Clock } from './clock.ts';
import type { Ids } from './ids.ts';

/** What a handle is bound to. */
export interface Binding {
  userId: string;
  tool: string;
  /** SHA-256 of the canonical JSON of the previewed arguments */
  argsDigest: string;
}

export type Consumed =
  | { kind: 'consumed'; binding: Binding }
  | { kind: 'unknown' }
  | { kind: 'expired' }
  /** the handle exists, bound to something else (left in place: its owner may still confirm it) */
  | { kind: 'mismatch'; binding: Binding };

export interface Confirmations {
  /** A fresh handle for `binding`, confirmable until `expiresAt`. */
  issue(binding: Binding): Promise<{ handle: string; expiresAt: Date }>;
  /** Consumes the handle when it is bound to exactly `expected` and not expired; at most once. */
  consume(handle: string, expected: Binding): Promise<Consumed>;
}

/** 32 random bytes: unguessable; the key is their digest. */
const HANDLE_BYTES = 32;

export const handleDigest = (handle: string): string => createHash('sha256').update(handle).digest('hex');

const keyOf = (handle: string) => `mcp:confirm:${handleDigest(handle)}`;

const encode = (b: Binding, expiresAtMs: number) => JSON.stringify([b.userId, b.tool, b.argsDigest, expiresAtMs]);

function decode(text: string): { binding: Binding; expiresAtMs: number } {
  const [userId, tool, argsDigest, expiresAtMs] = JSON.parse(text) as [string, string, string, number];
  return { binding: { userId, tool, argsDigest }, expiresAtMs };
}

/**
 * KEYS[1] the record; ARGV[1] the expected binding's text, ARGV[2] now (ms). Returns nil (none),
 * {0, v} (bound elsewhere: kept), {2, v} (expired: deleted), {1, v} (consumed: deleted).
 */
const CONSUME = `
local v = redis.call('GET', KEYS[1])
if not v then return nil end
local d = cjson.decode(v)
local e = cjson.decode(ARGV[1])
if d[1] ~= e[1] or d[2] ~= e[2] or d[3] ~= e[3] then return {0, v} end
redis.call('DEL', KEYS[1])
if d[4] <= tonumber(ARGV[2]) then return {2, v} end
return {1, v}
`;

export function createConfirmations(redis: Redis, clock: Clock, ids: Ids, ttlSeconds: number): Confirmations {
  return {
    async issue(binding) {
      const handle = ids.token(HANDLE_BYTES);
      const expiresAt = new Date(clock.now().getTime() + ttlSeconds * 1000);
      // Redis forgets the record a while after its expiry; the expiry itself is the service clock's.
      await redis.set(keyOf(handle), encode(binding, expiresAt.getTime()), 'EX', ttlSeconds * 2);
      return { handle, expiresAt };
    },
    async consume(handle, expected) {
      const now = clock.now().getTime();
      const answer = (await scriptCommand(redis, 'consume', CONSUME, 1)(keyOf(handle), encode(expected, 0), String(now))) as [number, string] | null;
      if (answer === null) return { kind: 'unknown' };
      const [outcome, text] = answer;
      const { binding } = decode(text);
      if (outcome === 0) return { kind: 'mismatch', binding };
      return outcome === 2 ? { kind: 'expired' } : { kind: 'consumed', binding };
    },
  };
}
