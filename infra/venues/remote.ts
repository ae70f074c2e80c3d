// The venue ports over HTTP: `serveVenues` puts any `Venues` (the simulation) behind a small JSON
// endpoint, `createRemoteVenues` is the adapter that calls it. With VENUE_URL set, every process
// (API, workers, a restarted worker) talks to one venue whose state outlives them, as a real venue
// does; that is what lets a worker be killed between a venue call and its append, and restarted.
// Every call is POST /{venue}/{component}/{method} with the arguments as a JSON array; the answer
// is `{ result }` or `{ error: { code, … } }`, turned back into the port's typed errors.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { VenueConflictError, VenueRefusedError, VenueUnavailableError, type VenueName, type VenueRefusal } from './errors.ts';
import type { Venues } from './port.ts';

const METHODS = {
  spot: { chain: ['submit', 'status'], account: ['poolFigures', 'accountFigures', 'lockMargin', 'releaseMargin'] },
  perp: { bridge: ['start', 'status'], account: ['poolFigures', 'accountFigures', 'lockMargin', 'releaseMargin'] },
  prices: { prices: ['priceOf'] },
} as const;

type Callable = Record<string, (...args: unknown[]) => Promise<unknown>>;

function target(venues: Venues, venue: string, component: string, method: string): ((...args: unknown[]) => Promise<unknown>) | null {
  const allowed = (METHODS as Record<string, Record<string, readonly string[]>>)[venue]?.[component];
  if (!allowed?.includes(method)) return null;
  const holder = (venue === 'prices'
    ? venues.prices
    : (venues as unknown as Record<string, Record<string, Callable>>)[venue]![component]!) as unknown as Callable;
  return holder[method]!.bind(holder);
}

function errorBody(err: unknown): Record<string, unknown> {
  if (err instanceof VenueConflictError) return { code: err.code, id: err.id, fields: err.fields };
  if (err instanceof VenueRefusedError) return { code: err.code, reason: err.reason, message: err.message, details: err.details };
  if (err instanceof VenueUnavailableError) return { code: err.code, venue: err.venue, operation: err.operation };
  return { code: 'VENUE_ERROR', message: err instanceof Error ? err.message : String(err) };
}

export interface VenueServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `venues` on 127.0.0.1. `onCall` runs after a call took effect and before its answer is
 * sent (tests use it to kill the caller at exactly that point).
 */
export async function serveVenues(
  venues: Venues,
  options: {
    port?: number;
    host?: string;
    onCall?: (call: { venue: string; component: string; method: string; args: unknown[]; result: unknown }) => void;
  } = {},
): Promise<VenueServer> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const [, venue = '', component = '', method = ''] = (req.url ?? '').split('/');
      const call = req.method === 'POST' ? target(venues, venue, component, method) : null;
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        // A price is a bigint (attodollars): sent as its decimal digits, read back by the prices group.
        res.end(JSON.stringify(body, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
      };
      if (!call) return send(404, { error: { code: 'VENUE_ERROR', message: `no venue call ${req.method} ${req.url}` } });
      let args: unknown[];
      try {
        args = JSON.parse(Buffer.concat(chunks).toString('utf8') || '[]') as unknown[];
        if (!Array.isArray(args)) throw new Error('arguments are an array');
      } catch (err) {
        return send(400, { error: { code: 'VENUE_ERROR', message: String(err) } });
      }
      try {
        const result = await call(...args);
        options.onCall?.({ venue, component, method, args, result });
        send(200, { result: result ?? null });
      } catch (err) {
        send(200, { error: errorBody(err) });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const toPrice = (result: unknown): bigint | null => (typeof result === 'string' && /^\d+$/.test(result) ? BigInt(result) : null);

/** The adapter a process uses to reach the venue served at `baseUrl`; unreachable is VenueUnavailableError. */
export function createRemoteVenues(baseUrl: string, options: { timeoutMs?: number } = {}): Venues {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const call =
    (venue: string, component: string, method: string) =>
    async (...args: unknown[]) => {
      const name: VenueName = venue === 'perp' ? 'perp' : 'spot';
      let body: { result?: unknown; error?: Record<string, unknown> };
      try {
        const res = await fetch(`${baseUrl}/${venue}/${component}/${method}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(args),
          signal: AbortSignal.timeout(timeoutMs),
        });
        body = (await res.json()) as typeof body;
      } catch (cause) {
        throw new VenueUnavailableError(name, method, { cause });
      }
      const error = body.error;
      if (!error) return body.result;
      switch (error.code) {
        case 'VENUE_ID_CONFLICT':
          throw new VenueConflictError(String(error.id), error.fields as string[]);
        case 'VENUE_REFUSED':
          throw new VenueRefusedError(error.reason as VenueRefusal, String(error.message), (error.details ?? {}) as Record<string, unknown>);
        case 'VENUE_UNAVAILABLE':
          throw new VenueUnavailableError(name, method);
        default:
          throw new Error(`venue ${venue}/${component}/${method}: ${String(error.message)}`);
      }
    };
  const group = (venue: string, component: string) =>
    Object.fromEntries((METHODS as Record<string, Record<string, readonly string[]>>)[venue]![component]!.map((m) => [m, call(venue, component, m)]));
  return {
    spot: { chain: group('spot', 'chain'), account: group('spot', 'account') },
    perp: { bridge: group('perp', 'bridge'), account: group('perp', 'account') },
    prices: { priceOf: async (symbolOrMint: string) => toPrice(await call('prices', 'prices', 'priceOf')(symbolOrMint)) },
  } as unknown as Venues;
}
