// Server-to-client requests in a 2025-11-25 session (sampling/createMessage, elicitation/create,
// roots/list). A session's POST is served by a fresh server (api/mcp/legacy.ts); a request it sends
// to the client goes on that POST's event stream, and the client answers with a later POST, which
// may reach any process. Here: each such request gets an id unique in the session (fresh servers
// all count from 0), and its answer finds the waiting server, in this process at once, else through
// Redis pub/sub (`<key prefix>mcp:replies:<session>`) to the process holding it.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { isJSONRPCRequest, type JSONRPCMessage, type JSONRPCResponse, type Transport } from '@modelcontextprotocol/server';
import type { Relay } from './relay.ts';

const repliesChannel = (sessionId: string) => `mcp:replies:${sessionId}`;
/** The ids we give requests to the client: an answer with any other id waits nowhere. */
const WIRE_ID = /^s-[A-Za-z0-9_-]{16}$/;

interface Waiting {
  transport: Transport;
  /** the id the server's own protocol layer gave the request */
  id: JSONRPCResponse['id'];
}

export interface SessionRequests {
  /** Gives `transport`'s requests to the client session-unique ids and lets their answers reach it; the returned function ends that. */
  attach(sessionId: string, transport: Transport): () => void;
  /** An answer the client POSTed: to the request waiting for it, here or in another process (dropped when it cannot be one of ours). */
  deliver(sessionId: string, response: JSONRPCResponse): Promise<void>;
}

export function sessionRequests(redis: Redis, relay: Relay, onerror: (error: Error) => void): SessionRequests {
  /** by session, then by the id the client saw */
  const waiting = new Map<string, Map<string, Waiting>>();

  const deliverHere = (sessionId: string, response: JSONRPCResponse): boolean => {
    const entry = waiting.get(sessionId)?.get(String(response.id));
    if (!entry) return false;
    waiting.get(sessionId)!.delete(String(response.id));
    entry.transport.onmessage?.({ ...response, id: entry.id } as JSONRPCMessage);
    return true;
  };

  return {
    attach(sessionId, transport) {
      const mine = new Set<string>();
      let listening: Promise<() => void> | undefined;
      const send = transport.send.bind(transport);
      transport.send = async (message, options) => {
        if (!isJSONRPCRequest(message)) return send(message, options);
        // Listening before the request leaves: an answer reaching another process at once still finds this one.
        listening ??= relay.listenChannel(repliesChannel(sessionId), (raw) => deliverHere(sessionId, JSON.parse(raw) as JSONRPCResponse));
        await listening;
        const wireId = `s-${randomBytes(12).toString('base64url')}`;
        const forSession = waiting.get(sessionId) ?? new Map<string, Waiting>();
        waiting.set(sessionId, forSession.set(wireId, { transport, id: message.id }));
        mine.add(wireId);
        return send({ ...message, id: wireId }, options);
      };
      return () => {
        const forSession = waiting.get(sessionId);
        for (const wireId of mine) forSession?.delete(wireId);
        if (forSession?.size === 0) waiting.delete(sessionId);
        listening?.then((stop) => stop(), onerror);
      };
    },
    async deliver(sessionId, response) {
      if (typeof response.id !== 'string' || !WIRE_ID.test(response.id) || deliverHere(sessionId, response)) return;
      await redis.publish(`${redis.options.keyPrefix ?? ''}${repliesChannel(sessionId)}`, JSON.stringify(response));
    },
  };
}
