// A 2025-11-25 session's standalone stream as a test reads it: `GET /mcp` (or `/mcp/sse`), its
// SSE events parsed as they come, waited for one by one with a deadline; or a POST's own stream
// (the answer to a request, with what the server sends the client meanwhile).

export interface SseEvent {
  id?: string;
  data: {
    jsonrpc: '2.0';
    id?: string | number;
    method?: string;
    params?: Record<string, unknown>;
    result?: Record<string, unknown>;
    error?: { code: number; message: string };
  };
}

export interface SessionStream {
  status: number;
  /** the next event not yet taken (rejects after `timeoutMs`) */
  next(timeoutMs?: number): Promise<SseEvent>;
  /** the events received and not taken within `ms` */
  drain(ms: number): Promise<SseEvent[]>;
  close(): void;
}

export async function openSessionStream(url: string, headers: Record<string, string>, path = '/mcp'): Promise<SessionStream> {
  const abort = new AbortController();
  return streamOf(await fetch(`${url}${path}`, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal }), abort);
}

/** POSTs `body` to `/mcp` and reads the answer's event stream as it comes. */
export async function postStream(url: string, headers: Record<string, string>, body: unknown): Promise<SessionStream> {
  const abort = new AbortController();
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
    signal: abort.signal,
  });
  return streamOf(res, abort);
}

function streamOf(res: Response, abort: AbortController): SessionStream {
  const queue: SseEvent[] = [];
  const waiting: Array<() => void> = [];
  const pump = async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = frame.split('\n');
        const data = lines.find((l) => l.startsWith('data: '));
        if (!data) continue; // a comment (keep-alive, open)
        const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
        queue.push({ ...(id ? { id } : {}), data: JSON.parse(data.slice(6)) });
        for (const wake of waiting.splice(0)) wake();
      }
    }
  };
  if (res.ok) pump().catch(() => {});
  const next = async (timeoutMs = 5000): Promise<SseEvent> => {
    const deadline = Date.now() + timeoutMs;
    while (!queue.length) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event on the session stream within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return queue.shift()!;
  };
  return {
    status: res.status,
    next,
    async drain(ms) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return queue.splice(0);
    },
    close: () => abort.abort(),
  };
}
