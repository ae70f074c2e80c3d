// The 2025-11-25 leg: sessions kept in Redis (api/mcp/sessions.ts), so any API process serves them.
// `initialize` opens one and answers its `mcp-session-id`; every later POST is served statelessly by
// a fresh server once the session is found and owned by the caller; GET is the session's event
// stream, fed across processes through the relay (api/mcp/relay.ts); DELETE ends it.
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import {
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  WebStandardStreamableHTTPServerTransport,
  type ClientCapabilities,
  type Implementation,
  type McpHandlerRequestOptions,
  type McpServer,
} from '@modelcontextprotocol/server';
import { mcpServerFor } from './server.ts';
import { mcpSessions, newSessionId, ownerOf, type McpSession } from './sessions.ts';
import { jsonRpcError, jsonRpcErrorBody } from './json-rpc.ts';
import { seedLogLevel } from './logging.ts';
import { sessionRequests } from './session-requests.ts';
import { unwatchAll } from './resource-watch.ts';
import { claimDelivery, deliveredBy, endSessionLog, eventsAfter, isAfter, type Relay, type StreamEvent } from './relay.ts';
import type { AppDeps } from '../deps.ts';

const KEEP_ALIVE_MS = 15_000;

const isInitialize = (body: unknown): body is { params: { protocolVersion: string; capabilities?: ClientCapabilities; clientInfo?: Implementation } } =>
  typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize';

/**
 * A per-request server of a 2025 session, as if it had seen the session's `initialize` and
 * `logging/setLevel`: the client's capabilities (the SDK checks them before sampling or eliciting),
 * its info, the negotiated version and the log level. The SDK keeps these on the Server instance
 * and has no public seam for a per-request one (its own seeding, for 2026 envelopes, is internal).
 */
function seedSession(server: McpServer, session: McpSession): void {
  const internals = server.server as unknown as {
    _clientCapabilities?: ClientCapabilities;
    _clientVersion?: Implementation;
    _negotiatedProtocolVersion?: string;
  };
  internals._clientCapabilities = session.clientCapabilities;
  internals._clientVersion = session.clientInfo;
  internals._negotiatedProtocolVersion = session.protocolVersion;
  seedLogLevel(server, session.logLevel);
}

/** `response` (an event stream) as it is, calling `end` once it is over: read to its end, failed, or cancelled by the client. */
function untilStreamEnds(response: Response, end: () => void): Response {
  const reader = response.body!.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason).catch(() => {});
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

export interface LegacyLeg {
  serve(request: Request, options: McpHandlerRequestOptions): Promise<Response>;
  /** closes this process's open event streams (the relay is its caller's to close) */
  close(): void;
}

export function legacyLeg(deps: AppDeps, relay: Relay, onerror: (error: Error) => void): LegacyLeg {
  const sessions = mcpSessions(deps.redis, deps.config.MCP_SESSION_TTL_SECONDS);
  const toClient = sessionRequests(deps.redis, relay, onerror);
  /** this process's open event streams, by session: DELETE closes them */
  const streams = new Map<string, Set<() => void>>();
  const callerOf = (options: McpHandlerRequestOptions) => (options.authInfo!.extra!.request as FastifyRequest).identity!;

  async function initialize(request: Request, options: McpHandlerRequestOptions): Promise<Response> {
    const body = options.parsedBody as { params: { protocolVersion: string; capabilities?: ClientCapabilities; clientInfo?: Implementation } };
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
        clientInfo: body.params.clientInfo ?? { name: 'unknown', version: 'unknown' },
        createdAt: deps.clock.now().toISOString(),
      });
      return response;
    } finally {
      await server.close();
    }
  }

  /**
   * A POST of the session: an answer to a request we sent the client goes to the server waiting for
   * it (202); anything else is served by a fresh server seeded with the session, whose requests to
   * the client (sampling, elicitation) go on this POST's stream. Torn down when that stream ends.
   */
  async function servePost(id: string, session: McpSession, request: Request, options: McpHandlerRequestOptions): Promise<Response> {
    const body = options.parsedBody;
    if (isJSONRPCResultResponse(body) || isJSONRPCErrorResponse(body)) {
      await toClient.deliver(id, body);
      return new Response(null, { status: 202 });
    }
    let teardown = () => {};
    try {
      const server = mcpServerFor({ era: 'legacy', authInfo: options.authInfo, requestInfo: request });
      seedSession(server, session);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const detach = toClient.attach(id, transport);
      let done = false;
      teardown = () => {
        if (done) return;
        done = true;
        detach();
        transport.close().catch(() => {});
        server.close().catch(() => {});
      };
      await server.connect(transport);
      request.signal?.addEventListener('abort', teardown, { once: true });
      const response = await transport.handleRequest(request, { authInfo: options.authInfo, parsedBody: body });
      if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
        teardown();
        return response;
      }
      return untilStreamEnds(response, teardown);
    } catch (error) {
      teardown();
      onerror(error instanceof Error ? error : new Error(String(error)));
      const requestId = (body as { id?: string | number } | undefined)?.id ?? null;
      return Response.json({ ...jsonRpcErrorBody(-32603, 'Internal error'), id: requestId }, { status: 500 });
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
            // Redis failing to answer the claim: this stream delivers (a message twice on two streams is
            // better than one lost: skipped here, a resumption after a later event would never replay it).
            if (!(await claimDelivery(deps.redis, ttl, id, event.id, streamId).catch(() => true))) return;
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
    return new Response(body, {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'mcp-session-id': id },
    });
  }

  return {
    async serve(request, options) {
      if (request.method === 'POST' && isInitialize(options.parsedBody)) return initialize(request, options);
      const id = request.headers.get('mcp-session-id');
      if (!id) return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required (send initialize first)');
      const session = await sessions.find(id, callerOf(options));
      if (!session) return jsonRpcError(404, -32001, 'Session not found');
      if (request.method === 'POST') return servePost(id, session, request, options);
      if (request.method === 'DELETE') {
        await Promise.all([sessions.end(id), endSessionLog(deps.redis, id), unwatchAll(deps.redis, id)]);
        for (const closeStream of [...(streams.get(id) ?? [])]) closeStream();
        return new Response(null, { status: 200 });
      }
      if (!request.headers.get('accept')?.includes('text/event-stream'))
        return jsonRpcError(406, -32000, 'Not Acceptable: Client must accept text/event-stream');
      return eventStream(id, request.headers.get('last-event-id'));
    },
    close() {
      for (const closers of [...streams.values()]) for (const closeStream of [...closers]) closeStream();
    },
  };
}
