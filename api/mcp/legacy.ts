// The 2025-11-25 leg: sessions kept in Redis (api/mcp/sessions.ts), so any API process serves them.
// `initialize` opens one and answers its `mcp-session-id`; every later POST is served statelessly by
// a fresh server once the session is found and owned by the caller; GET is the session's event
// stream, fed across processes through the relay (api/mcp/relay.ts); DELETE ends it.
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { legacyStatelessFallback, WebStandardStreamableHTTPServerTransport, type McpHandlerRequestOptions } from '@modelcontextprotocol/server';
import { mcpServerFor } from './server.ts';
import { mcpSessions, newSessionId, ownerOf } from './sessions.ts';
import { jsonRpcError } from './json-rpc.ts';
import { unwatchAll } from './resource-watch.ts';
import { claimDelivery, deliveredBy, endSessionLog, eventsAfter, isAfter, type Relay, type StreamEvent } from './relay.ts';
import type { AppDeps } from '../deps.ts';

const KEEP_ALIVE_MS = 15_000;

const isInitialize = (body: unknown): body is { params: { protocolVersion: string; capabilities?: unknown; clientInfo?: unknown } } =>
  typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize';

export interface LegacyLeg {
  serve(request: Request, options: McpHandlerRequestOptions): Promise<Response>;
  /** closes this process's open event streams (the relay is its caller's to close) */
  close(): void;
}

export function legacyLeg(deps: AppDeps, relay: Relay, onerror: (error: Error) => void): LegacyLeg {
  const sessions = mcpSessions(deps.redis, deps.config.MCP_SESSION_TTL_SECONDS);
  const stateless = legacyStatelessFallback(mcpServerFor, onerror);
  /** this process's open event streams, by session: DELETE closes them */
  const streams = new Map<string, Set<() => void>>();
  const callerOf = (options: McpHandlerRequestOptions) => (options.authInfo!.extra!.request as FastifyRequest).identity!;

  async function initialize(request: Request, options: McpHandlerRequestOptions): Promise<Response> {
    const body = options.parsedBody as { params: { protocolVersion: string; capabilities?: unknown; clientInfo?: unknown } };
    const id = newSessionId();
    const server = mcpServerFor({ era: 'legacy', authInfo: options.authInfo, requestInfo: request });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => id, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const response = await transport.handleRequest(request, options);
      const answer = response.ok ? ((await response.clone().json()) as { result?: { protocolVersion?: string } }) : undefined;
      if (!answer?.result) return response;
      await sessions.open(id, {
        owner: ownerOf(callerOf(options)),
        protocolVersion: answer.result.protocolVersion ?? body.params.protocolVersion,
        clientCapabilities: body.params.capabilities ?? {},
        clientInfo: body.params.clientInfo ?? {},
        createdAt: deps.clock.now().toISOString(),
      });
      return response;
    } finally {
      await server.close();
    }
  }

  /**
   * Listens to the session's channel, then reads the log after `lastEventId`, so nothing falls
   * between the two: the events missed, the live ones that came meanwhile, and where later ones go.
   * Null when Redis fails.
   */
  async function catchUp(id: string, lastEventId: string | null) {
    const early: StreamEvent[] = [];
    let forward: ((event: StreamEvent) => void) | undefined;
    let stop: (() => void) | undefined;
    try {
      stop = await relay.listen(id, (event) => (forward ? forward(event) : early.push(event)));
      const missed = lastEventId ? await eventsAfter(deps.redis, id, lastEventId) : [];
      return { backlog: () => [...missed, ...early], stop, forwardTo: (write: (event: StreamEvent) => void) => (forward = write) };
    } catch {
      stop?.();
      return null;
    }
  }

  /**
   * The session's stream: with `Last-Event-ID`, first the logged events after it; an event already
   * written is skipped. Each event is written only if this stream claims it (claimDelivery): a
   * stream resuming after an event is the stream that delivered it, so it replays what it missed
   * and never what another stream of the session delivered.
   */
  async function eventStream(id: string, lastEventId: string | null): Promise<Response> {
    const ttl = deps.config.MCP_SESSION_TTL_SECONDS;
    const streamId = (lastEventId ? await deliveredBy(deps.redis, id, lastEventId).catch(() => null) : null) ?? randomUUID();
    const relayed = await catchUp(id, lastEventId);
    if (!relayed) return jsonRpcError(503, -32000, 'Service unavailable: the session stream cannot be opened now');
    let closeStream = () => {};
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const encoder = new TextEncoder();
        let last = lastEventId ?? '0-0';
        // claims are asked in arrival order and written in that order
        let queue = Promise.resolve();
        const write = (event: StreamEvent) => {
          queue = queue.then(async () => {
            if (!isAfter(event.id, last)) return;
            if (!(await claimDelivery(deps.redis, ttl, id, event.id, streamId).catch(() => false))) return;
            last = event.id;
            try {
              controller.enqueue(encoder.encode(`id: ${event.id}\nevent: message\ndata: ${JSON.stringify(event.message)}\n\n`));
            } catch {
              // the client closed the stream meanwhile: the event stays in the log for its resumption
            }
          });
        };
        const timer = setInterval(() => controller.enqueue(encoder.encode(': keepalive\n\n')), KEEP_ALIVE_MS);
        closeStream = () => {
          clearInterval(timer);
          relayed.stop();
          streams.get(id)?.delete(closeStream);
          if (streams.get(id)?.size === 0) streams.delete(id);
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        };
        streams.set(id, (streams.get(id) ?? new Set()).add(closeStream));
        controller.enqueue(encoder.encode(': stream open\n\n'));
        for (const event of relayed.backlog()) write(event);
        relayed.forwardTo(write);
      },
      cancel: () => closeStream(),
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'mcp-session-id': id } });
  }

  return {
    async serve(request, options) {
      if (request.method === 'POST' && isInitialize(options.parsedBody)) return initialize(request, options);
      const id = request.headers.get('mcp-session-id');
      if (!id) return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required (send initialize first)');
      const session = await sessions.find(id, callerOf(options));
      if (!session) return jsonRpcError(404, -32001, 'Session not found');
      if (request.method === 'POST') return stateless(request, options);
      if (request.method === 'DELETE') {
        await Promise.all([sessions.end(id), endSessionLog(deps.redis, id), unwatchAll(deps.redis, id)]);
        for (const closeStream of [...(streams.get(id) ?? [])]) closeStream();
        return new Response(null, { status: 200 });
      }
      if (!request.headers.get('accept')?.includes('text/event-stream')) return jsonRpcError(406, -32000, 'Not Acceptable: Client must accept text/event-stream');
      return eventStream(id, request.headers.get('last-event-id'));
    },
    close() {
      for (const closers of [...streams.values()]) for (const closeStream of [...closers]) closeStream();
    },
  };
}
