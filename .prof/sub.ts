import { Session } from 'node:inspector/promises';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import { startTestApp } from '../test/support/app.ts';
import { followableAgent } from '../test/support/agents.ts';
import { signIn } from '../test/support/auth.ts';
function snap() { const m = new Map<string, number>(); for (const d of fs.readdirSync('/proc')) { if (!/^\d+$/.test(d)) continue; try { const t = fs.readFileSync(`/proc/${d}/stat`, 'utf8'); const name = t.slice(t.indexOf('(') + 1, t.lastIndexOf(')')); const f = t.slice(t.lastIndexOf(')') + 2).split(' '); m.set(d + ' ' + name, Number(f[11]) + Number(f[12])); } catch {} } return m; }
function diff(a: Map<string, number>, b: Map<string, number>, n = 1) { const by = new Map<string, number>(); for (const [k, v] of b) { const d = v - (a.get(k) ?? 0); if (d > 0) { const n = k.split(' ').slice(1).join(' ') + (k.startsWith(process.pid + ' ') ? '[server]' : ''); by.set(n, (by.get(n) ?? 0) + d / 100); } } return [...by].sort((x, y) => y[1] - x[1]).slice(0, 6).map(([k, v]) => `${k}=${(1000 * v / n).toFixed(2)}ms`).join(' '); }
import { percentile } from '../bench/measure.ts';

function externalLoad(spec: unknown): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import=tsx', 'bench/load.ts'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load ${code}`))));
    child.stdin.end(JSON.stringify(spec));
  });
}
const mode = process.argv[2] ?? 'post';
const lags: number[] = []; let measuring = false; const batches: number[] = [];
const app = await startTestApp({ durable: true, config: { ADMIN_EMAILS: 'a@example.test', DATABASE_POOL_SIZE: '24' },
  runnerOptions: { onCommitted: (events, at) => { if (!measuring) return; batches.push(events.length); for (const e of events) lags.push(at - e.createdAt.getTime()); } } });
const admin = await signIn(app, 'a@example.test');
const dev = await signIn(app, 'd@example.test');
const agentIds: string[] = [];
for (let i = 0; i < 40; i++) agentIds.push(await followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, { name: `B${i}`, venue: i % 2 ? 'PERP_VENUE' : 'SPOT_VENUE', ...(i % 2 ? { maxLeverage: 10 } : {}) }, { live: true }));
const users = [] as any[];
for (let i = 0; i < 16; i++) users.push(await signIn(app, `u${i}@example.test`));
const bodies = Array.from({ length: 800 }, (_, i) => ({ agentId: agentIds[i % 40], allocationMode: 'USD_AMOUNT', allocationAmountUsd: 1 + Math.floor(i / 40) }));
if (mode === 'get') await externalLoad({ url: app.url, seconds: 4, clients: users.map((u) => ({ method: 'POST', path: '/api/v1/users/me/subscriptions', token: u.accessToken, bodies })) });
const session = new Session(); session.connect();
const doProf = process.env.PROF === '1';
if (doProf) { await session.post('Profiler.enable'); await session.post('Profiler.start'); }
measuring = true;
const admin2 = new (await import('pg')).default.Client({ host: '127.0.0.1', user: 'postgres', database: 'postgres' }); await admin2.connect(); await admin2.query('SELECT pg_stat_statements_reset()');
const c0 = snap();
const stat0 = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/ +/).slice(1).map(Number);
const r = await externalLoad({ url: app.url, seconds: Number(process.env.SECS ?? 6), clients: users.map((u) => mode === 'post'
  ? { method: 'POST', path: '/api/v1/users/me/subscriptions', token: u.accessToken, bodies }
  : { method: 'GET', path: '/api/v1/users/me/subscriptions', token: u.accessToken }) });
measuring = false;
const stat1 = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/ +/).slice(1).map(Number);
console.log('cpu per op:', diff(c0, snap(), r.count), 'machine busy per op', ((stat1.slice(0,3).reduce((x,y)=>x+y,0)+stat1[5]!+stat1[6]! - (stat0.slice(0,3).reduce((x,y)=>x+y,0)+stat0[5]!+stat0[6]!)) * 10 / r.count).toFixed(2), 'ms');
if (process.env.PGSS) { const r2 = await admin2.query(`SELECT calls, round(total_exec_time::numeric,0) AS ms, round((total_exec_time/calls)::numeric,3) AS avg, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) AS q FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25`); for (const x of r2.rows) console.log(String(x.calls).padStart(7), String(x.ms).padStart(6) + 'ms', String(x.avg).padStart(7), String(x.rows).padStart(7), x.q); }
await admin2.end();
if (doProf) { const { profile } = await session.post('Profiler.stop'); fs.writeFileSync(`/tmp/prof/${mode}.cpuprofile`, JSON.stringify(profile)); }
console.log(mode, r.perSecond.toFixed(0), '/s p50', percentile(r.latenciesMs, 50).toFixed(1), 'p99', percentile(r.latenciesMs, 99).toFixed(1), 'fail', r.failures, 'client cpu/op', r.clientCpuMsPerRequest.toFixed(2),
  '| lag p50', percentile(lags, 50), 'p99', percentile(lags, 99), 'batches', batches.length, 'mean', (batches.reduce((a, b) => a + b, 0) / Math.max(1, batches.length)).toFixed(1));
await app.close();
