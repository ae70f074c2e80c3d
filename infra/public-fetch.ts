// A fetch for URLs a stranger names (an OAuth client ID metadata document): it reaches public
// addresses only. The host is resolved once, every address it resolves to is checked against the
// special-use ranges below, and the connection goes to those checked addresses (no second resolution
// a rebinding DNS server could answer differently); an IP literal is checked as it is, in whatever
// form the URL gave it (WHATWG URL parsing already turned 2130706433, 127.1 and 0x7f000001 into
// 127.0.0.1). No redirect is followed; the whole exchange and the body are bounded. Developer
// webhooks (infra/webhook-sender.ts) post through it as well: a body given as text is sent; where a
// deployment allows loopback (development, tests), they may use plain http to a loopback address.
import { lookup as dnsLookup } from 'node:dns/promises';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request, type RequestOptions } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** IANA special-purpose and non-public ranges: loopback, private, link-local, CGNAT, documentation, multicast, reserved. */
const SPECIAL_USE: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.88.99.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  // unspecified, loopback and the IPv4-compatible block; IPv4-mapped addresses (::ffff:a.b.c.d) are
  // checked by BlockList against the IPv4 ranges above
  ['::', 96, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['2001::', 23, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['2002::', 16, 'ipv6'],
  ['3fff::', 20, 'ipv6'],
  ['5f00::', 16, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['fec0::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

const specialUse = new BlockList();
for (const [network, prefix, family] of SPECIAL_USE) specialUse.addSubnet(network, prefix, family);
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

export interface PublicFetchOptions {
  /** the whole exchange: resolution, connection, TLS, headers and body */
  timeoutMs: number;
  /** the most body bytes read; a longer body fails the fetch */
  maxBytes: number;
  /** tests only: loopback addresses count as public (a metadata server on 127.0.0.1) */
  allowLoopback?: boolean;
  /** tests only: the certificate authority to trust instead of Node's bundle */
  ca?: string;
  /** development and tests only, with allowLoopback: plain http is fetched when every address is loopback */
  loopbackHttp?: boolean;
  /**
   * Connections kept open and reused for the next request to the same host, port and checked
   * addresses (webhook deliveries to one receiver). Every request still resolves
   * and checks the host first: a host that now resolves elsewhere gets a connection of its own.
   */
  keepAlive?: boolean;
}

/** The most hosts whose idle connections a keep-alive fetch holds; the oldest's are closed past it. */
const KEPT_HOSTS = 256;
const KEPT_IDLE_MS = 1_000;
/** connections kept per host: as many as one agent's webhook deliveries may be in flight */
const KEPT_PER_HOST = 8;

type Address = { address: string; family: 4 | 6 };

export class NotPublicAddressError extends Error {
  override name = 'NotPublicAddressError';
}

/** Whether `address` (an IP literal) is one a fetch may connect to. */
function isPublicAddress(address: string, allowLoopback = false): boolean {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  if (allowLoopback && loopback.check(address, family)) return true;
  return !specialUse.check(address, family);
}

/** Every address `hostname` stands for, each checked; refused when any is not public. */
async function publicAddresses(hostname: string, allowLoopback: boolean): Promise<Address[]> {
  const literal = hostname.replace(/^\[(.*)\]$/, '$1');
  const addresses: Address[] = isIP(literal)
    ? [{ address: literal, family: isIP(literal) as 4 | 6 }]
    : ((await dnsLookup(hostname, { all: true, verbatim: true })) as Address[]);
  if (addresses.length === 0) throw new NotPublicAddressError(`${hostname} resolves to no address`);
  const refused = addresses.find((a) => !isPublicAddress(a.address, allowLoopback));
  if (refused) throw new NotPublicAddressError(`${hostname} resolves to ${refused.address}, which is not a public address`);
  return addresses;
}

/** A lookup that answers the addresses already checked, whatever it is asked. */
function pinnedLookup(addresses: Address[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  }) as LookupFunction;
}

const NULL_BODY_STATUS = new Set([101, 204, 205, 304]);

function rejectOnAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** The exchange over one connection to the checked addresses; the body read up to `maxBytes`. */
type Agents = Map<string, HttpAgent>;

/** The agent keeping connections to this host, port and set of checked addresses (a new one, the oldest closed past KEPT_HOSTS). */
function agentFor(agents: Agents, url: URL, addresses: Address[]): HttpAgent {
  const key = `${url.protocol}//${url.host}|${addresses.map((a) => a.address).join(',')}`;
  const kept = agents.get(key);
  if (kept) {
    agents.delete(key);
    agents.set(key, kept); // the most recently used last
    return kept;
  }
  // an idle connection is closed after a second: a burst reuses it, and it is gone before a receiver's own idle time-out could race a request;
  // as many kept as one agent's deliveries may be in flight (IN_FLIGHT_PER_AGENT, domain/webhook/delivery.ts), so its lanes side by side reuse theirs
  const agentOptions = { keepAlive: true, maxSockets: KEPT_PER_HOST, maxFreeSockets: KEPT_PER_HOST, timeout: KEPT_IDLE_MS };
  const agent = url.protocol === 'http:' ? new HttpAgent(agentOptions) : new HttpsAgent(agentOptions);
  agents.set(key, agent);
  if (agents.size > KEPT_HOSTS) {
    const [oldest] = agents.entries().next().value!;
    // forgotten, not destroyed: a request in flight on it finishes, and its idle sockets close after KEPT_IDLE_MS
    agents.delete(oldest);
  }
  return agent;
}

function exchange(
  url: URL,
  init: RequestInit,
  addresses: Address[],
  options: PublicFetchOptions,
  signal: AbortSignal,
  agent: HttpAgent | false,
): Promise<Response> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const requestOptions: RequestOptions = {
    host,
    port: url.port || 443,
    path: `${url.pathname}${url.search}`,
    method: init.method ?? 'GET',
    headers: Object.fromEntries(new Headers(init.headers)),
    lookup: pinnedLookup(addresses),
    agent,
    signal,
    ...(options.ca ? { ca: options.ca } : {}),
  };
  const send = url.protocol === 'http:' ? httpRequest : request;
  if (url.protocol === 'http:') requestOptions.port = url.port || 80;
  return new Promise<Response>((resolve, reject) => {
    const req = send(requestOptions, async (res) => {
      try {
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > options.maxBytes) throw new Error(`response body over ${options.maxBytes} bytes`);
          chunks.push(chunk);
        }
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
        }
        const status = res.statusCode ?? 0;
        resolve(new Response(NULL_BODY_STATUS.has(status) ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage, headers }));
      } catch (err) {
        req.destroy();
        reject(err);
      }
    });
    req.on('error', reject);
    req.end(typeof init.body === 'string' ? init.body : undefined);
  });
}

/** A fetch (the subset oidc-provider and the webhook sender use: method, headers, signal, a text body) that reaches public https addresses only. */
export function createPublicFetch(options: PublicFetchOptions) {
  const agents: Agents = new Map();
  return async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(String(input));
    const plainLoopback = url.protocol === 'http:' && options.allowLoopback === true && options.loopbackHttp === true;
    if (url.protocol !== 'https:' && !plainLoopback) throw new NotPublicAddressError(`only https is fetched, not ${url.protocol}`);
    const bound = AbortSignal.timeout(options.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, bound]) : bound;
    const addresses = await rejectOnAbort(publicAddresses(url.hostname, options.allowLoopback ?? false), signal);
    if (plainLoopback && !addresses.every((a) => loopback.check(a.address, a.family === 6 ? 'ipv6' : 'ipv4'))) {
      throw new NotPublicAddressError('only https is fetched from addresses other than loopback');
    }
    const agent = options.keepAlive ? agentFor(agents, url, addresses) : false;
    return rejectOnAbort(exchange(url, init, addresses, options, signal, agent), signal);
  };
}
