// `npm run bench:profile [-- --seconds N --flow follow|withdraw|sell|replay|wallet|mcp|me|list --save file.cpuprofile]`: where a follow's (a
// withdrawal's, a manual sell's, an Idempotency-Key replay's, a GET /api/v1/wallet's, an MCP tools/call
// get_wallet's as bench/mcp.ts sends it, a GET /api/v1/users/me's, a GET of the 40 subscriptions bench/http.ts reads) time goes. Runs the real app with durable commits, drives the flow from a separate
// client process at 16 concurrent users,
// and prints (1) the server's CPU profile top entries by self time, taken with the inspector only
// while the load runs, and (2) the SQL statements per request, counted at the pg driver.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { followableAgent } from '../test/support/agents.ts';
import { api, startTestApp } from '../test/support/app.ts';
import { manyUsers, signIn } from '../test/support/auth.ts';
import { cpuDuring } from './cpu.ts';
import { countStatements } from './statements.ts';
import { callWallet, modernHeaders } from './mcp.ts';
import { followEveryAgent } from './http.ts';

const secondsAt = process.argv.indexOf('--seconds');
const seconds = secondsAt > 0 ? Number(process.argv[secondsAt + 1]) : 6;
const flowAt = process.argv.indexOf('--flow');
const flow = flowAt > 0 ? process.argv[flowAt + 1] : 'follow';
const FLOWS = ['follow', 'withdraw', 'sell', 'replay', 'wallet', 'mcp', 'me', 'list'];
if (!FLOWS.includes(flow!)) throw new Error(`--flow ${FLOWS.join('|')}, not ${flow}`);
const saveAt = process.argv.indexOf('--save');
/** where the raw profile goes (a .cpuprofile Chrome's DevTools open), if asked */
const savePath = saveAt > 0 ? process.argv[saveAt + 1] : undefined;
const CLIENTS = 16;
const AGENTS = 40;

function load(spec: unknown): Promise<{ count: number; perSecond: number; failures: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import=tsx', 'bench/load.ts'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load exited ${code}`))));
    child.stdin.end(JSON.stringify(spec));
  });
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

/** Where a frame's code lives: a package, node's own code, or a file of this project. */
function placeOf(url: string): string {
  if (!url) return '(native, GC, idle)';
  if (url.includes('node_modules/')) return url.split('node_modules/').pop()!.split('/')[0]!;
  if (url.startsWith('node:')) return 'node';
  return url.replace(/^file:\/\/\/.*?\/(main|wt-[^/]+)\//, '');
}

/**
 * The samples of the server at work: not idle, and not the inspector's own (stopping the profiler
 * serialises it on the main thread: up to 9% of a short profile). Each with its wall time since the
 * previous sample, so time the server waited to run again inside a call would count for that call:
 * `busyMs` against the CPU /proc reports tells whether the shares are CPU (a sell's profile at load
 * 5-8 on two cores: 3,269 ms sampled at work, 3,430 ms of CPU, writev's third is kernel time of
 * loopback sends; at load 9: 3,806 ms against 2,070 ms, and writev's 66% is mostly waiting).
 */
function busySamples(profile: Profile): { ids: number[]; deltas: number[]; busyMs: number; parent: Map<number, number>; byId: Map<number, ProfileNode> } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const ids: number[] = [];
  const deltas: number[] = [];
  profile.samples.forEach((id, i) => {
    if (byId.get(id)!.callFrame.functionName === '(idle)') return;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) if (byId.get(at)!.callFrame.url.startsWith('node:inspector')) return;
    ids.push(id);
    deltas.push(profile.timeDeltas[i]!);
  });
  return { ids, deltas, busyMs: deltas.reduce((a, b) => a + b, 0) / 1000, parent, byId };
}

/** Self time grouped by where the code lives (a package, node, a file of ours), idle left out. */
function byPlace(profile: Profile, n: number) {
  const { ids, deltas, byId } = busySamples(profile);
  const self = new Map<string, number>();
  ids.forEach((id, i) => {
    const { functionName, url } = byId.get(id)!.callFrame;
    const key = url ? placeOf(url) : functionName;
    self.set(key, (self.get(key) ?? 0) + deltas[i]!);
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
}

/**
 * Each sample (idle left out) to the innermost frame of this project's code on its stack (bench/
 * left out), by file and function: that code's own time plus the packages, node and system calls it
 * called (a pg write's syscall counts for the query's caller); samples without one (socket reads,
 * timers, GC) to where their innermost frame lives.
 */
function byCaller(profile: Profile, n: number, key: (functionName: string, place: string) => string) {
  const { ids, deltas, byId, parent } = busySamples(profile);
  const sum = new Map<string, number>();
  let total = 0;
  ids.forEach((id, i) => {
    const leaf = byId.get(id)!.callFrame;
    total += deltas[i]!;
    let k = `(no code of ours) ${leaf.url ? placeOf(leaf.url) : leaf.functionName}`;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url } = byId.get(at)!.callFrame;
      const place = placeOf(url);
      if (!url.startsWith('file://') || url.includes('node_modules/') || place.startsWith('bench/')) continue;
      k = key(functionName || '(anonymous)', place);
      break;
    }
    sum.set(k, (sum.get(k) ?? 0) + deltas[i]!);
  });
  return [...sum.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
}

function top(profile: Profile, n: number) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = url.includes('node_modules/') ? url.split('node_modules/').pop()!.split('/')[0] : url.replace(/^file:\/\/\/.*?\/main\//, '');
    const key = `${functionName || '(anonymous)'}  ${where}${url ? `:${lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + profile.timeDeltas[i]!);
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
}

// As in service: precompiled answers (GET users/me) are not compared with zod's encoding, a check for tests (api/plugins/serializer.ts).
const app = await startTestApp({ durable: true, config: { NODE_ENV: 'development', ADMIN_EMAILS: 'profile-admin@example.test', DATABASE_POOL_SIZE: '24' } });
try {
  const admin = await signIn(app, 'profile-admin@example.test');
  const dev = await signIn(app, 'profile-dev@example.test');
  const agents: string[] = [];
  for (let i = 0; i < AGENTS; i++)
    agents.push(await followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, { name: `Profiled ${i}` }, { live: true }));
  const users = await manyUsers(app, 'profiled', CLIENTS);
  const bodies = Array.from({ length: AGENTS * 20 }, (_, i) => ({
    agentId: agents[i % AGENTS],
    allocationMode: 'USD_AMOUNT',
    allocationAmountUsd: 1 + Math.floor(i / AGENTS),
  }));
  const PATH = '/api/v1/users/me/subscriptions';
  // A withdrawal run withdraws 0.25 USD at a time from one funded pool per user (bench/http.ts's run).
  if (flow === 'withdraw') {
    for (const [i, u] of users.entries()) {
      const res = await api(app, 'POST', PATH, {
        token: u.accessToken,
        body: { agentId: agents[i % AGENTS], allocationMode: 'USD_AMOUNT', allocationAmountUsd: 5000 },
      });
      if (res.status !== 200) throw new Error(`funding: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }
  // A list run reads the 40 pools every user follows (bench/http.ts's GET run).
  if (flow === 'list') await followEveryAgent(app, app.deps.pool, users, agents);
  // Manual trades (bench/wallet.ts's runs): each user buys lots of SOL first, then sells 0.1 SOL at a
  // time (one sell in flight per wallet), replays one answered keyed sell, or reads its wallet.
  const manual = flow === 'sell' || flow === 'replay' || flow === 'wallet' || flow === 'mcp';
  if (manual) {
    const priced = await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { SOL: 100 } } });
    if (priced.status !== 200) throw new Error(`prices: ${priced.status}`);
    await Promise.all(
      users.map(async (u, i) => {
        for (let lot = 0; lot < 4; lot++) {
          const res = await api(app, 'POST', '/api/v1/wallet/buy', { token: u.accessToken, body: { mint: 'SOL', amountUsd: 500 } });
          if (res.status !== 200) throw new Error(`buy: ${res.status} ${JSON.stringify(res.body)}`);
        }
        const res = await api(app, 'POST', '/api/v1/wallet/sell', {
          token: u.accessToken,
          body: { mint: 'SOL', amount: 0.1 },
          headers: { 'idempotency-key': `profiled-${i}` },
        });
        if (res.status !== 200) throw new Error(`keyed sell: ${res.status} ${JSON.stringify(res.body)}`);
      }),
    );
  }
  const sellBody = { mint: 'SOL', amount: 0.1 };
  const clients = users.map((u, i) =>
    flow === 'me' || flow === 'list'
      ? { method: 'GET', path: flow === 'me' ? '/api/v1/users/me' : PATH, token: u.accessToken }
      : flow === 'withdraw'
        ? { method: 'POST', path: `${PATH}/${agents[i % AGENTS]}/allocation/withdraw`, token: u.accessToken, bodies: [{ amountUsd: 0.25 }] }
        : flow === 'sell'
          ? { method: 'POST', path: '/api/v1/wallet/sell', token: u.accessToken, bodies: [sellBody] }
          : flow === 'replay'
            ? { method: 'POST', path: '/api/v1/wallet/sell', token: u.accessToken, bodies: [sellBody], headers: { 'idempotency-key': `profiled-${i}` } }
            : flow === 'wallet'
              ? { method: 'GET', path: '/api/v1/wallet', token: u.accessToken }
              : flow === 'mcp'
                ? {
                    method: 'POST',
                    path: '/mcp',
                    token: u.accessToken,
                    bodies: Array.from({ length: 64 }, (_, i) => callWallet(i + 1)),
                    headers: modernHeaders('tools/call', 'get_wallet'),
                  }
                : { method: 'POST', path: PATH, token: u.accessToken, bodies },
  );

  // Statements per request: every query the server's pg clients send, by its first words.
  let counting = false;
  const { statements, stop: stopCounting } = countStatements(() => counting);

  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  counting = true;
  const { result: run, cpu } = await cpuDuring(process.pid, app.deps.pool, () => load({ url: app.url, seconds, clients }));
  counting = false;
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  if (savePath) writeFileSync(savePath, JSON.stringify(profile));
  stopCounting();

  console.log(`\n${flow}: ${run.perSecond.toFixed(0)} /s, ${run.count} calls, ${run.failures} non-2xx`);
  const per = (ms: number) => (ms / Math.max(1, run.count)).toFixed(2);
  console.log(`CPU per ${flow}: server ${per(cpu.serverMs)} ms (the profiler's sampling included), database backends ${per(cpu.databaseMs)} ms`);
  console.log('\nServer CPU profile, top entries by self time (the server process only, during the load):');
  for (const line of top(profile as never, 25)) console.log(`  ${line}`);
  const { busyMs } = busySamples(profile as never);
  console.log(
    `\nThe views below share out ${busyMs.toFixed(0)} ms of wall time sampled at work, against ${cpu.serverMs} ms of server CPU from /proc ` +
      '(close: the shares are CPU; far above: time waiting to run again inside calls is in them).',
  );
  console.log('\nServer time by where the code lives (self time, idle left out):');
  for (const line of byPlace(profile as never, 15)) console.log(`  ${line}`);
  console.log('\nServer time by the innermost code of ours on the stack, per layer (its callees in packages, node and the kernel included; idle left out):');
  for (const line of byCaller(profile as never, 12, (_, place) => place.split('/')[0]!)) console.log(`  ${line}`);
  console.log('\nServer time by the innermost code of ours on the stack, per file (its callees in packages, node and the kernel included; idle left out):');
  for (const line of byCaller(profile as never, 20, (_, place) => place)) console.log(`  ${line}`);
  console.log('\nThe same per function:');
  for (const line of byCaller(profile as never, 25, (fn, place) => `${fn}  ${place}`)) console.log(`  ${line}`);
  const total = [...statements.values()].reduce((a, b) => a + b, 0);
  console.log(`\nSQL statements: ${(total / run.count).toFixed(2)} per ${flow} (server and projectors, all pools)`);
  for (const [text, n] of [...statements.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15))
    console.log(`  ${(n / run.count).toFixed(2).padStart(6)}  ${text}`);
} finally {
  await app.close();
}
process.exit(0);
