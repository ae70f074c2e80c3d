// `npm run bench:profile [-- --seconds N --flow follow|withdraw]`: where a follow's (or a
// withdrawal's) time goes. Runs the real app with durable commits, drives the flow from a separate
// client process at 16 concurrent users,
// and prints (1) the server's CPU profile top entries by self time, taken with the inspector only
// while the load runs, and (2) the SQL statements per request, counted at the pg driver.
import { spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import pg from 'pg';
import { followableAgent } from '../test/support/agents.ts';
import { api, startTestApp } from '../test/support/app.ts';
import { manyUsers, signIn } from '../test/support/auth.ts';

const secondsAt = process.argv.indexOf('--seconds');
const seconds = secondsAt > 0 ? Number(process.argv[secondsAt + 1]) : 6;
const flowAt = process.argv.indexOf('--flow');
const flow = flowAt > 0 ? process.argv[flowAt + 1] : 'follow';
if (flow !== 'follow' && flow !== 'withdraw') throw new Error(`--flow follow|withdraw, not ${flow}`);
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

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }

function top(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }, n: number) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = url.includes('node_modules/') ? url.split('node_modules/').pop()!.split('/')[0] : url.replace(/^file:\/\/\/.*?\/main\//, '');
    const key = `${functionName || '(anonymous)'}  ${where}${url ? `:${lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + profile.timeDeltas[i]!);
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
}

const app = await startTestApp({ durable: true, config: { ADMIN_EMAILS: 'profile-admin@example.test', DATABASE_POOL_SIZE: '24' } });
try {
  const admin = await signIn(app, 'profile-admin@example.test');
  const dev = await signIn(app, 'profile-dev@example.test');
  const agents: string[] = [];
  for (let i = 0; i < AGENTS; i++) agents.push(await followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, { name: `Profiled ${i}` }, { live: true }));
  const users = await manyUsers(app, 'profiled', CLIENTS);
  const bodies = Array.from({ length: AGENTS * 20 }, (_, i) => ({ agentId: agents[i % AGENTS], allocationMode: 'USD_AMOUNT', allocationAmountUsd: 1 + Math.floor(i / AGENTS) }));
  const PATH = '/api/v1/users/me/subscriptions';
  // A withdrawal run withdraws 0.25 USD at a time from one funded pool per user (bench/http.ts's run).
  if (flow === 'withdraw') {
    for (const [i, u] of users.entries()) {
      const res = await api(app, 'POST', PATH, { token: u.accessToken, body: { agentId: agents[i % AGENTS], allocationMode: 'USD_AMOUNT', allocationAmountUsd: 5000 } });
      if (res.status !== 200) throw new Error(`funding: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }
  const clients = users.map((u, i) =>
    flow === 'withdraw'
      ? { method: 'POST', path: `${PATH}/${agents[i % AGENTS]}/allocation/withdraw`, token: u.accessToken, bodies: [{ amountUsd: 0.25 }] }
      : { method: 'POST', path: PATH, token: u.accessToken, bodies },
  );

  // Statements per request: every query the server's pg clients send, by its first words.
  const statements = new Map<string, number>();
  const query = pg.Client.prototype.query;
  let counting = false;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (counting) {
      const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { name?: string; text?: string }).name ?? (args[0] as { text?: string }).text ?? '?');
      const key = text.replace(/\s+/g, ' ').slice(0, 70);
      statements.set(key, (statements.get(key) ?? 0) + 1);
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;

  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  counting = true;
  const run = await load({ url: app.url, seconds, clients });
  counting = false;
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  pg.Client.prototype.query = query;

  console.log(`\n${flow}: ${run.perSecond.toFixed(0)} /s, ${run.count} calls, ${run.failures} non-2xx`);
  console.log('\nServer CPU profile, top entries by self time (the server process only, during the load):');
  for (const line of top(profile as never, 25)) console.log(`  ${line}`);
  const total = [...statements.values()].reduce((a, b) => a + b, 0);
  console.log(`\nSQL statements: ${(total / run.count).toFixed(2)} per ${flow} (server and projectors, all pools)`);
  for (const [text, n] of [...statements.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${(n / run.count).toFixed(2).padStart(6)}  ${text}`);
} finally {
  await app.close();
}
process.exit(0);
