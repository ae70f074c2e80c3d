// The MCP figures, on one app with durable commits.
// (1) A read tool through MCP against the same REST read: tools/call get_wallet as 2026-07-28
// stateless POSTs to /mcp against GET /api/v1/wallet (the tool runs the route's query), same users,
// same concurrency, from a separate client process in alternating rounds (bench/paired.ts); target:
// MCP/s >= 0.8 x REST/s.
// (2) A 2025-11-25 session served by another API instance (a second Fastify on the same database
// and Redis, as a second process would be) against the instance that opened it: the same tools/call,
// one at a time, alternating which goes first; target: added median <= 1 ms.
// (3) tools/list p99 at the same concurrency (2026-07-28 stateless).
// (1b) The floor: the same tools/call answered with none of the SDK (bench/mcp-floor.ts, a second
// app with a bench-only route) against the same REST GET on that app, paired; what no MCP server of
// this answer's shape gets below.
// (4) CPU per request in the server's process, one request at a time through Fastify's inject (the
// whole pipeline but the socket), tools/call and tools/list against the REST GET in alternating
// batches: the least CPU of the batches, the figure a shared machine disturbs least.
import { apiWithConfig, startTestApp } from '../test/support/app.ts';
import { manyUsers } from '../test/support/auth.ts';
import { CLIENTS, POOL_SIZE } from './http.ts';
import { fmt, percentile, report, verdict } from './measure.ts';
import { FLOOR_PATH, floorApp } from './mcp-floor.ts';
import { cpuPer, failed, latency, measuredLoad, paired, ratioNote, ROUNDS, type LoadClient } from './paired.ts';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const ACCEPT = 'application/json, text/event-stream';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
};
export const callWallet = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_wallet', arguments: {}, _meta: META } });
const listTools = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: META } });
export const modernHeaders = (method: string, name?: string) => ({
  accept: ACCEPT,
  'mcp-protocol-version': MODERN,
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
});
/** Part (4): batches per side, requests per batch. */
const CPU_BATCHES = 20;
const CPU_BATCH = 100;

/** The least CPU per request (ms, this process) over alternating batches of each side. */
async function leastCpu(sides: Record<string, () => Promise<void>>): Promise<Record<string, number>> {
  const least: Record<string, number> = {};
  const batch = async (run: () => Promise<void>, n: number) => {
    const before = process.cpuUsage();
    for (let i = 0; i < n; i++) await run();
    const spent = process.cpuUsage(before);
    return (spent.user + spent.system) / 1000 / n;
  };
  for (const run of Object.values(sides)) await batch(run, CPU_BATCH * 3); // warm
  for (let b = 0; b < CPU_BATCHES; b++)
    for (const [name, run] of Object.entries(sides)) least[name] = Math.min(least[name] ?? Infinity, await batch(run, CPU_BATCH));
  return least;
}

/** One-at-a-time requests per instance in part (2), after as many unmeasured. */
const SEQUENTIAL = 1500;

async function post(url: string, token: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  // the answer is JSON or a one-message event stream, as the server chooses
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? 'null');
  return {
    status: res.status,
    headers: res.headers,
    body: (JSON.parse(json) ?? {}) as { result?: { structuredContent?: { userId?: string } }; error?: unknown },
  };
}

export async function mcpBench(seconds: number) {
  const app = await startTestApp({ durable: true, config: { DATABASE_POOL_SIZE: String(POOL_SIZE) } });
  const other = await apiWithConfig(app, {});
  const closers: Array<() => Promise<void>> = [];
  try {
    const users = await manyUsers(app, 'mcpbench', CLIENTS);
    const probe = await post(app.url, users[0]!.accessToken, callWallet(1), modernHeaders('tools/call', 'get_wallet'));
    if (probe.status !== 200 || probe.body.result?.structuredContent?.userId !== users[0]!.userId)
      throw new Error(`MCP tools/call: ${probe.status} ${JSON.stringify(probe.body)}`);

    // (1) tools/call against the REST GET.
    const part = Math.max(2, seconds / ROUNDS);
    const bodies = Array.from({ length: 64 }, (_, i) => callWallet(i + 1));
    const mcpClients: LoadClient[] = users.map((u) => ({
      method: 'POST',
      path: '/mcp',
      token: u.accessToken,
      bodies,
      headers: modernHeaders('tools/call', 'get_wallet'),
    }));
    const restClients: LoadClient[] = users.map((u) => ({ method: 'GET', path: '/api/v1/wallet', token: u.accessToken }));
    const vsRest = await paired((side) =>
      measuredLoad(process.pid, app.deps.pool, { url: app.url, seconds: part, clients: side === 'ours' ? mcpClients : restClients }),
    );

    // (1b) The floor, on an app of its own.
    const floor = await floorApp(app);
    closers.push(() => floor.close());
    const floorClients: LoadClient[] = users.map((u) => ({
      method: 'POST',
      path: FLOOR_PATH,
      token: u.accessToken,
      bodies,
      headers: modernHeaders('tools/call', 'get_wallet'),
    }));
    const floorProbe = await fetch(`${floor.url}${FLOOR_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${users[0]!.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(callWallet(1)),
    });
    const floorBody = (await floorProbe.json()) as { result?: unknown };
    if (JSON.stringify(floorBody.result) !== JSON.stringify(probe.body.result))
      throw new Error(`the floor answers otherwise than /mcp: ${JSON.stringify(floorBody)}`);
    const floorVsRest = await paired((side) =>
      measuredLoad(process.pid, app.deps.pool, { url: floor.url, seconds: part, clients: side === 'ours' ? floorClients : restClients }),
    );

    // (2) A 2025 session on the instance that opened it and on the other one.
    const token = users[0]!.accessToken;
    const init = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    };
    const opened = await post(app.url, token, init, { accept: ACCEPT, 'mcp-protocol-version': LEGACY });
    const sessionId = opened.headers.get('mcp-session-id');
    if (!sessionId) throw new Error(`initialize: ${opened.status} ${JSON.stringify(opened.body)}`);
    const sessionHeaders = { accept: ACCEPT, 'mcp-protocol-version': LEGACY, 'mcp-session-id': sessionId };
    const legacyCall = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_wallet', arguments: {} } };
    const timedCall = async (url: string) => {
      const t0 = performance.now();
      const res = await post(url, token, legacyCall, sessionHeaders);
      if (res.status !== 200 || !res.body.result) throw new Error(`session call: ${res.status} ${JSON.stringify(res.body)}`);
      return performance.now() - t0;
    };
    const same: number[] = [];
    const moved: number[] = [];
    for (let i = -200; i < SEQUENTIAL; i++) {
      let here: number, there: number;
      if (i % 2) {
        here = await timedCall(app.url);
        there = await timedCall(other.url);
      } else {
        there = await timedCall(other.url);
        here = await timedCall(app.url);
      }
      if (i >= 0) {
        same.push(here);
        moved.push(there);
      }
    }
    const addedMs = percentile(moved, 50) - percentile(same, 50);

    // (3) tools/list under the same concurrency.
    const listBodies = Array.from({ length: 64 }, (_, i) => listTools(i + 1));
    const listing = await measuredLoad(process.pid, app.deps.pool, {
      url: app.url,
      seconds: Math.max(2, seconds / 2),
      clients: users.map((u) => ({ method: 'POST', path: '/mcp', token: u.accessToken, bodies: listBodies, headers: modernHeaders('tools/list') })),
    });

    // (4) CPU per request in process.
    const fastify = app.runtime.app!;
    const host = new URL(app.url).host;
    const injected =
      (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: unknown, on = fastify) =>
      async () => {
        const res = await on.inject({
          method,
          url,
          headers: { host, authorization: `Bearer ${token}`, ...headers },
          ...(payload ? { payload: JSON.stringify(payload) } : {}),
        });
        if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      };
    const json = { 'content-type': 'application/json' };
    const cpu = await leastCpu({
      call: injected('POST', '/mcp', { ...json, ...modernHeaders('tools/call', 'get_wallet') }, callWallet(1)),
      list: injected('POST', '/mcp', { ...json, ...modernHeaders('tools/list') }, listTools(1)),
      rest: injected('GET', '/api/v1/wallet', {}),
      floor: injected('POST', FLOOR_PATH, json, callWallet(1), floor.server),
    });

    const { ours: mcp, conventional: rest } = vsRest;
    console.log(
      `\nMCP: tools/call get_wallet (${MODERN} stateless POST /mcp) against GET /api/v1/wallet, ${CLIENTS} concurrent clients in a separate process, one user each; ${ROUNDS} alternating rounds of ${fmt(part, 1)} s per side`,
    );
    report([
      ['MCP tools/call get_wallet', `${fmt(mcp.perSecond)} /s`, `${latency(mcp)}; ${mcp.count} calls; CPU server + database ${cpuPer(mcp)}`],
      ['REST GET /api/v1/wallet', `${fmt(rest.perSecond)} /s`, `${latency(rest)}; ${rest.count} calls; CPU server + database ${cpuPer(rest)}`],
      ['MCP / REST', fmt(vsRest.ratio, 2), ratioNote(vsRest, 0.8)],
      [
        'floor / REST (no SDK)',
        fmt(floorVsRest.ratio, 2),
        `${ratioNote(floorVsRest, 0.8)}; the same answer with none of the SDK (bench/mcp-floor.ts), CPU server + database ${cpuPer(floorVsRest.ours)} against ${cpuPer(floorVsRest.conventional)}`,
      ],
      [
        'non-2xx, MCP / REST',
        `${mcp.failures} / ${rest.failures}`,
        `MCP ${failed(mcp)}, REST ${failed(rest)}; target 0: ${verdict(mcp.failures + rest.failures === 0)}`,
      ],
      [
        `${LEGACY} session on another instance`,
        `${addedMs >= 0 ? '+' : ''}${fmt(addedMs, 3)} ms`,
        `median added; same instance p50 ${fmt(percentile(same, 50), 3)} ms, p99 ${fmt(percentile(same, 99), 3)} ms; other instance p50 ${fmt(percentile(moved, 50), 3)} ms, p99 ${fmt(percentile(moved, 99), 3)} ms (tools/call get_wallet one at a time, ${SEQUENTIAL} each, alternating); target <= 1 ms: ${verdict(addedMs <= 1)}`,
      ],
      [
        'tools/list',
        `p99 ${fmt(percentile(listing.latenciesMs, 99), 2)} ms`,
        `${latency(listing)}; ${fmt(listing.perSecond)} /s, ${CLIENTS} clients; non-2xx ${failed(listing)}`,
      ],
      [
        'CPU per request, in process',
        `${fmt(cpu.call!, 2)} ms`,
        `tools/call get_wallet; tools/list ${fmt(cpu.list!, 2)} ms; REST GET ${fmt(cpu.rest!, 2)} ms (least of ${CPU_BATCHES} batches of ${CPU_BATCH} each, one at a time through inject); REST / tools/call ${fmt(cpu.rest! / cpu.call!, 2)}; the floor (no SDK) ${fmt(cpu.floor!, 2)} ms, REST / floor ${fmt(cpu.rest! / cpu.floor!, 2)}`,
      ],
    ]);
    return { ratio: vsRest.ratio, sessionAddedMs: addedMs };
  } finally {
    for (const close of closers) await close();
    await other.close();
    await app.close();
  }
}
