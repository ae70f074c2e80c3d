// Issue 2 figures through the real app over HTTP: (b) POST subscribe at 16 concurrent users,
// (c) b / the raw ceiling (a) measured on the same server in the same run, (d) projector lag
// while (b) runs, (e) GET subscriptions; then (f) rebuilding the subscription read model.
import { allProjectors } from '../projections/index.ts';
import { rebuild } from '../projections/rebuild.ts';
import { startTestApp } from '../test/support/app.ts';
import { followableAgent } from '../test/support/agents.ts';
import { signIn } from '../test/support/auth.ts';
import { rawCeiling } from './eventstore.ts';
import { spawn } from 'node:child_process';
import { fmt, percentile, report, verdict, type Run } from './measure.ts';

/** Runs bench/load.ts in a child process (a separate client, not sharing the server's event loop). */
function externalLoad(spec: unknown): Promise<Run & { failures: number; clientCpuMsPerRequest: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import=tsx', 'bench/load.ts'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load generator exited ${code}`))));
    child.stdin.end(JSON.stringify(spec));
  });
}

const CLIENTS = 16;
const AGENTS = 40;
const ADMIN = 'bench-admin@example.test';

export async function httpBench(seconds: number) {
  let measuring = false;
  const lagsMs: number[] = [];
  const batchSizes: number[] = [];
  const app = await startTestApp({
    durable: true,
    config: { ADMIN_EMAILS: ADMIN, DATABASE_POOL_SIZE: '24' },
    runnerOptions: {
      onCommitted: (events, committedAt) => {
        if (!measuring) return;
        batchSizes.push(events.length);
        for (const e of events) lagsMs.push(committedAt - e.createdAt.getTime());
      },
    },
  });
  try {
    const admin = await signIn(app, ADMIN);
    const developer = await signIn(app, 'bench-dev@example.test');
    const agentIds: string[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const body = { name: `Bench ${i}`, venue: i % 2 ? 'PERP_VENUE' : 'SPOT_VENUE', ...(i % 2 ? { maxLeverage: 10 } : {}) };
      agentIds.push(await followableAgent(app, { developer: developer.accessToken, admin: admin.accessToken }, body, { live: true }));
    }
    const users: Awaited<ReturnType<typeof signIn>>[] = [];
    for (let i = 0; i < CLIENTS; i++) users.push(await signIn(app, `bench-user-${i}@example.test`));

    const raw = await rawCeiling(app.databaseUrl, seconds);

    // Each call follows an agent or follows it again with a larger allocation: always a change.
    const followBodies = Array.from({ length: AGENTS * 20 }, (_, i) => ({
      agentId: agentIds[i % AGENTS],
      allocationMode: 'USD_AMOUNT',
      allocationAmountUsd: 1 + Math.floor(i / AGENTS),
    }));
    measuring = true;
    const subscribe = await externalLoad({
      url: app.url,
      seconds,
      clients: users.map((u) => ({ method: 'POST', path: '/api/v1/users/me/subscriptions', token: u.accessToken, bodies: followBodies })),
    });
    measuring = false;
    const list = await externalLoad({
      url: app.url,
      seconds,
      clients: users.map((u) => ({ method: 'GET', path: '/api/v1/users/me/subscriptions', token: u.accessToken })),
    });
    // The stack's floor: the cheapest signed-in request (token check, identity lookup, one row).
    // Any command that does more cannot pass this rate here.
    const me = await externalLoad({
      url: app.url,
      seconds,
      clients: users.map((u) => ({ method: 'GET', path: '/api/v1/users/me', token: u.accessToken })),
    });
    const failures = subscribe.failures + list.failures + me.failures;

    const projector = allProjectors.find((p) => p.name === 'subscriptions')!;
    const events = (await app.deps.pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n;
    const r0 = performance.now();
    await rebuild(app.deps.store, app.deps.pool, projector);
    const rebuildSeconds = (performance.now() - r0) / 1000;

    const ratio = subscribe.perSecond / raw;
    const lagP99 = percentile(lagsMs, 99);
    console.log('\nThe first flow over HTTP (real Fastify app, PostgreSQL store, durable commits, 16 concurrent users in a separate client process)');
    report([
      ['(a) raw ceiling: INSERT autocommit', `${fmt(raw)} /s`, 'baseline, same server, same run'],
      ['(b) POST subscribe', `${fmt(subscribe.perSecond)} /s`, `p50 ${fmt(percentile(subscribe.latenciesMs, 50), 1)} ms, p99 ${fmt(percentile(subscribe.latenciesMs, 99), 1)} ms; ${subscribe.count} calls`],
      ['(c) b / a', fmt(ratio, 2), `target >= 0.25: ${verdict(ratio >= 0.25)}`],
      ['(d) projector lag during (b)', `${fmt(lagP99, 1)} ms`, `p99 (p50 ${fmt(percentile(lagsMs, 50), 1)} ms); target <= 100 ms: ${verdict(lagP99 <= 100)}`],
      ['    projector batches during (b)', fmt(batchSizes.length), `mean ${fmt(batchSizes.reduce((a, b) => a + b, 0) / Math.max(1, batchSizes.length), 1)} events per batch (one transaction for all read models)`],
      ['(e) GET subscriptions', `${fmt(list.perSecond)} /s`, `p50 ${fmt(percentile(list.latenciesMs, 50), 1)} ms, p99 ${fmt(percentile(list.latenciesMs, 99), 1)} ms`],
      ['    floor: GET /users/me', `${fmt(me.perSecond)} /s`, `p50 ${fmt(percentile(me.latenciesMs, 50), 1)} ms; ${fmt(me.perSecond / raw, 2)} of (a): the cheapest signed-in request on this stack`],
      ['    client CPU per request', `${fmt(subscribe.clientCpuMsPerRequest, 2)} ms`, 'the load generator shares the cores: subscribe run'],
      ['(f) rebuild subscriptions model', `${fmt(Number(events) / rebuildSeconds)} ev/s`, `${events} events in ${fmt(rebuildSeconds, 2)} s`],
      ['failed requests', String(failures), failures ? 'UNEXPECTED' : ''],
    ]);
  } finally {
    await app.close();
  }
}
