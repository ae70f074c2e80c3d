// The SDK's web-standard handler served on Node's request and response, in place of
// @modelcontextprotocol/node's toNodeHandler. The request keeps its method, URL and headers; the
// body Fastify parsed goes to the SDK as `parsedBody`, which it reads instead of the Request's body
// (every read of a body in the SDK is under `parsedBody === undefined`), so no Request body is made
// (toWebRequest serialised the parsed body back to text for it). An event stream is written as
// toNodeHandler writes it (chunk by chunk, waiting for the socket to drain, ending when the client
// leaves). A JSON answer, which is what a tools/call without notifications gets, is read whole and
// written at once with its Content-Length, as Fastify writes a REST answer: toNodeHandler writes
// every answer chunked, the headers and body in one write and the closing chunk in another, a
// second send per request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toWebRequest } from '@modelcontextprotocol/node';
import type { McpHandlerRequestOptions } from '@modelcontextprotocol/server';
import { jsonRpcErrorBody } from './json-rpc.ts';

type WebHandler = (request: Request, options: McpHandlerRequestOptions) => Promise<Response>;

/**
 * A Request whose `signal` is the given one, the Node response's abort, itself. Given to the
 * Request constructor as `init.signal`, undici would follow it with a signal of its own (an abort
 * listener, a WeakRef and a FinalizationRegistry entry per request, which the collector then
 * works through): 0.02-0.07 ms of CPU per tools/call in five paired in-process runs (docs/decisions.md). The SDK only
 * reads `request.signal`; a `clone()` (which the SDK makes only of a request whose body it reads
 * itself, never of one with `parsedBody`) gets a signal of its own, as undici's does.
 */
class NodeRequest extends Request {
  readonly #signal: AbortSignal;
  constructor(url: string, init: RequestInit, signal: AbortSignal) {
    super(url, init);
    this.#signal = signal;
  }
  override get signal(): AbortSignal {
    return this.#signal;
  }
}

/** The web Request of a Node request whose body Fastify parsed (`parsedBody`), else toWebRequest's. */
function webRequestOf(req: IncomingMessage, parsedBody: unknown, signal: AbortSignal): Promise<Request> | Request {
  if (parsedBody === undefined) return toWebRequest(req, undefined, { signal });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    // the body's own framing goes with the body
    if (value === undefined || name.startsWith(':') || name === 'content-length' || name === 'transfer-encoding' || name === 'content-encoding') continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return new NodeRequest(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'POST', headers }, signal);
}

/** A Content-Type of JSON (`application/json`, with or without parameters). */
const isJson = (contentType: string | null) => contentType !== null && /^application\/json\s*(;|$)/i.test(contentType);

/** The JSON-RPC request id to echo in an error answer, when the body was one request. */
const idOf = (body: unknown) => {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};

/**
 * A JSON answer's bytes, read from its stream as they come (one chunk for the SDK's `Response.json`)
 * and wrapped without a copy: `arrayBuffer()` went through undici's body mixin (its own reader loop,
 * promises and a copy into a new ArrayBuffer): 0.07-0.12 ms of CPU per tools/list in process, paired, and
 * 0.02-0.03 ms per tools/call (docs/decisions.md).
 */
async function readWhole(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  const [only] = chunks;
  return chunks.length === 1 && only ? Buffer.from(only.buffer, only.byteOffset, only.byteLength) : Buffer.concat(chunks);
}

export function nodeHandler(handler: WebHandler, onerror: (error: Error) => void) {
  return async (req: IncomingMessage & { auth?: McpHandlerRequestOptions['authInfo'] }, res: ServerResponse, parsedBody: unknown): Promise<void> => {
    let finished = false;
    const abort = new AbortController();
    res.on('close', () => {
      if (!finished) abort.abort();
    });
    if (res.destroyed) abort.abort();
    let response: Response;
    try {
      const request = await webRequestOf(req, parsedBody, abort.signal);
      response = await handler(request, { ...(req.auth !== undefined && { authInfo: req.auth }), ...(parsedBody !== undefined && { parsedBody }) });
    } catch (error) {
      onerror(error instanceof Error ? error : new Error(String(error)));
      response = Response.json({ ...jsonRpcErrorBody(-32603, 'Internal error'), id: idOf(parsedBody) }, { status: 500 });
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of response.headers) headers[name] = value;
    if (response.body === null || isJson(response.headers.get('content-type'))) {
      const body = response.body === null ? null : await readWhole(response.body);
      if (body !== null) headers['content-length'] = String(body.byteLength);
      finished = true;
      res.writeHead(response.status, headers);
      res.end(body ?? undefined);
      return;
    }
    res.writeHead(response.status, headers);
    let drained: (() => void) | undefined;
    res.on('drain', () => {
      drained?.();
      drained = undefined;
    });
    const closed = new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true }));
    try {
      for await (const chunk of response.body) {
        if (abort.signal.aborted) break;
        if (!res.write(chunk)) await Promise.race([new Promise<void>((resolve) => (drained = resolve)), closed]);
      }
    } catch {
      // the stream failed or the client left: end what was sent
    }
    finished = true;
    res.end();
  };
}
