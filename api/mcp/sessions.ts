// The 2025-11-25 sessions, kept in Redis so that any API process serves a session's requests.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ClientCapabilities, Implementation, LoggingLevel } from '@modelcontextprotocol/server';
import type { Identity } from '../types.ts';
import { touchSessionLog } from './relay.ts';
import { touchSubscriptions } from './resource-watch.ts';

export interface McpSession {
  /** who opened it: the only caller it answers (another identity gets 404, as for an unknown session) */
  owner: string;
  protocolVersion: string;
  clientCapabilities: ClientCapabilities;
  clientInfo: Implementation;
  createdAt: string;
  /** the client's `logging/setLevel`: no log notice below it; absent, the default level of api/mcp/logging.ts */
  logLevel?: LoggingLevel;
}

/** Mode, user and credential: a session opened with one API key, OAuth client or sign-in is not reused with another. */
export const ownerOf = (identity: Identity) => `${identity.mode}:${identity.userId}:${identity.keyId ?? identity.clientId ?? identity.sessionId ?? ''}`;

/** A session id: 32 random bytes (the spec asks for a cryptographically secure, unguessable id), visible ASCII. */
export const newSessionId = () => randomBytes(32).toString('base64url');

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
const keyOf = (id: string) => `mcp:session:${id}`;

export interface McpSessions {
  open(id: string, session: McpSession): Promise<void>;
  /** the session when it exists and `identity` owns it (its lifetime then starts again); null otherwise */
  find(id: string, identity: Identity): Promise<McpSession | null>;
  end(id: string): Promise<void>;
  /** keeps the session's log level (its lifetime unchanged); false when the session is gone */
  setLogLevel(id: string, level: LoggingLevel): Promise<boolean>;
}

export function mcpSessions(redis: Redis, ttlSeconds: number): McpSessions {
  return {
    async open(id, session) {
      await redis.set(keyOf(id), JSON.stringify(session), 'EX', ttlSeconds);
    },
    async find(id, identity) {
      if (!SESSION_ID.test(id)) return null;
      const stored = await redis.get(keyOf(id));
      if (!stored) return null;
      const session = JSON.parse(stored) as McpSession;
      if (session.owner !== ownerOf(identity)) return null;
      // Sliding: only its owner's requests keep it alive, with its event log and subscriptions.
      await Promise.all([redis.expire(keyOf(id), ttlSeconds), touchSessionLog(redis, ttlSeconds, id), touchSubscriptions(redis, ttlSeconds, id)]);
      return session;
    },
    async end(id) {
      await redis.del(keyOf(id));
    },
    async setLogLevel(id, level) {
      // Only the owner reaches this (its request found the session first); two racing levels: the last one holds.
      const stored = await redis.get(keyOf(id));
      if (!stored) return false;
      return (await redis.set(keyOf(id), JSON.stringify({ ...(JSON.parse(stored) as McpSession), logLevel: level }), 'KEEPTTL', 'XX')) === 'OK';
    },
  };
}
