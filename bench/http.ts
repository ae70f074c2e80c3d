// The first flow over HTTP, ours against two conventional peers (bench/conventional/: one
// transaction per follow or withdrawal, same rules and auth work): the like-for-like build (the
// same response schemas) and the lean one (answers not re-validated), driven by the same client
// loop in the same rounds: follows per second, GET subscriptions, withdrawals per second, non-2xx
// answers, projector lag during our follows; then rebuilding the subscription read model.
import { allProjectors } from '../projections/index.ts';
import { rebuild } from '../projections/rebuild.ts';
import { api, startTestApp, type TestApp } from '../test/support/app.ts';
import { followableAgent } from '../test/support/agents.ts';
import { signIn, type SignedIn } from '../test/support/auth.ts';
import { startConventional, type Conventional } from './conventional/start.ts';
import { fmt, percentile, report, verdict } from './measure.ts';
import { availableParallelism, loadavg } from 'node:os';
import { cpuPer, failed, latency, measuredLoad, pairedWith, ratioNote, ROUNDS, type LoadRun, type LoadSpec } from './paired.ts';

export const CLIENTS = 16;
export const AGENTS = 40;
export const POOL_SIZE = 24;
export const ADMIN = 'bench-admin@example.test';
export const PATH = '/api/v1/users/me/subscriptions';
/** Each user's pool for the withdraw run holds this much, so every withdrawal succeeds all run long. */
const FUND_USD = 5000;
export const WITHDRAW_USD = 0.25;
export const withdrawPath = (agentId: string) => `${PATH}/${agentId}/allocation/withdraw`;

/**
 * A follow run's bodies: each call follows an agent or follows it again with a larger allocation,
 * always a change (each round starts above the last one's amounts).
 */
export const followBodies = (agentIds: string[], round: number) =>
  Array.from({ length: agentIds.length * 20 }, (_, i) => ({
    agentId: agentIds[i % agentIds.length],
    allocationMode: 'USD_AMOUNT',
    allocationAmountUsd: 1 + (round + 1) * 20 + Math.floor(i / agentIds.length),
  }));

/**
 * GET must read as many rows on both sides: whichever agents a user's follow run did not reach are
 * followed now, through each side's own route. Returns the rows per user, lowest and highest.
 */
export async function followEveryAgent(server: { url: string }, db: TestApp['deps']['pool'], users: SignedIn[], agentIds: string[]) {
  const { rows } = await db.query<{ user_id: string; agent_id: string }>('SELECT user_id, agent_id FROM subscriptions');
  const followed = new Set(rows.map((r) => `${r.user_id} ${r.agent_id}`));
  await Promise.all(
    users.map(async (u) => {
      for (const agentId of agentIds.filter((a) => !followed.has(`${u.userId} ${a}`))) {
        const res = await api(server, 'POST', PATH, { token: u.accessToken, body: { agentId, allocationMode: 'USD_AMOUNT', allocationAmountUsd: 1 } });
        if (res.status !== 200) throw new Error(`follow before GET: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }),
  );
  // Our follows are answered before their rows are projected (read-your-writes waits in the reader,
  // docs/decisions.md): the rows are counted once they are all there, or after 5 s as they are.
  const count = async () =>
    (
      await db.query<{ lo: number; hi: number }>(
        'SELECT min(n)::int AS lo, max(n)::int AS hi FROM (SELECT count(*) AS n FROM subscriptions GROUP BY user_id) c',
      )
    ).rows[0]!;
  let counts = await count();
  for (const until = Date.now() + 5000; (counts.lo !== agentIds.length || counts.hi !== agentIds.length) && Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 50));
    counts = await count();
  }
  return counts;
}

/** Tops every user's withdraw pool up to FUND_USD through the side's own follow route. */
export async function fund(server: { url: string }, users: SignedIn[], agentOf: (user: number) => string) {
  await Promise.all(
    users.map(async (u, i) => {
      const res = await api(server, 'POST', PATH, {
        token: u.accessToken,
        body: { agentId: agentOf(i), allocationMode: 'USD_AMOUNT', allocationAmountUsd: FUND_USD },
      });
      if (res.status !== 200) throw new Error(`funding before withdrawals: ${res.status} ${JSON.stringify(res.body)}`);
    }),
  );
}

/** USD the side's pool rows paid out: every withdrawal answered 2xx must be there, and nothing else. */
export async function withdrawnUsd(db: TestApp['deps']['pool']): Promise<number> {
  const { rows } = await db.query<{ out: string }>('SELECT coalesce(sum(confirmed_out_micro), 0) AS out FROM subscriptions');
  return Number(rows[0]!.out) / 1e6;
}

/**
 * The flow's agents and users, through the real routes of `app` (whose config names ADMIN among
 * ADMIN_EMAILS): AGENTS live agents, spot and perp by turns, and CLIENTS signed-in users.
 */
export async function seedFlow(app: Pick<TestApp, 'url' | 'deps' | 'waitForMail'>): Promise<{ agentIds: string[]; users: SignedIn[] }> {
  const admin = await signIn(app, ADMIN);
  const developer = await signIn(app, 'bench-dev@example.test');
  const agentIds: string[] = [];
  for (let i = 0; i < AGENTS; i++) {
    const body = { name: `Bench ${i}`, venue: i % 2 ? 'PERP_VENUE' : 'SPOT_VENUE', ...(i % 2 ? { maxLeverage: 10 } : {}) };
    agentIds.push(await followableAgent(app, { developer: developer.accessToken, admin: admin.accessToken }, body, { live: true }));
  }
  const users: SignedIn[] = [];
  for (let i = 0; i < CLIENTS; i++) users.push(await signIn(app, `bench-user-${i}@example.test`));
  return { agentIds, users };
}

export async function httpBench(seconds: number) {
  let measuring = false;
  const lagsMs: number[] = [];
  const batchSizes: number[] = [];
  const app = await startTestApp({
    durable: true,
    config: { ADMIN_EMAILS: ADMIN, DATABASE_POOL_SIZE: String(POOL_SIZE) },
    runnerOptions: {
      onCommitted: (events, committedAt) => {
        if (!measuring) return;
        batchSizes.push(events.length);
        for (const e of events) lagsMs.push(committedAt - e.createdAt.getTime());
      },
    },
  });
  let conventional: Conventional | undefined;
  let lean: Conventional | undefined;
  try {
    const { agentIds, users } = await seedFlow(app);
    // Same agents, users and sessions (same ids), so the same tokens pass the same checks there.
    conventional = await startConventional(app, { userIds: users.map((u) => u.userId), agentIds }, POOL_SIZE);
    lean = await startConventional(app, { userIds: users.map((u) => u.userId), agentIds }, POOL_SIZE, true);
    const baselines = { conventional, lean };

    const part = Math.max(2, seconds / ROUNDS);
    type Side = 'ours' | keyof typeof baselines;
    const urlOf = (side: Side) => (side === 'ours' ? app.url : baselines[side].url);
    /** A load run with the CPU its side's server and database backends spent meanwhile. */
    const counted = (url: string, spec: Omit<LoadSpec, 'url'>): Promise<LoadRun> => {
      const peer = Object.values(baselines).find((b) => b.url === url);
      const [pid, db] = peer ? [peer.pid, peer.db] : [process.pid, app.deps.pool];
      return measuredLoad(pid, db, { url, ...spec });
    };
    const sides = ['conventional', 'lean'] as const;
    const load = (url: string, method: string, path: string, bodies?: unknown[], duration = part) =>
      counted(url, { seconds: duration, clients: users.map((u) => ({ method, path, token: u.accessToken, bodies })) });

    const allFollows = await pairedWith(sides, async (side, round) => {
      measuring = side === 'ours' && round >= 0;
      const run = await load(urlOf(side), 'POST', PATH, followBodies(agentIds, round));
      measuring = false;
      return run;
    });
    const follows = allFollows.conventional;
    const [follow, conventionalFollow, leanFollow] = [follows.ours, follows.conventional, allFollows.lean.conventional];

    const rows = await followEveryAgent(app, app.deps.pool, users, agentIds);
    const conventionalRows = await followEveryAgent(conventional, conventional.db, users, agentIds);
    const leanRows = await followEveryAgent(lean, lean.db, users, agentIds);
    const allLists = await pairedWith(sides, (side) => load(urlOf(side), 'GET', PATH));
    const lists = allLists.conventional;
    const [list, conventionalList, leanList] = [lists.ours, lists.conventional, allLists.lean.conventional];
    // The stack's floor: the cheapest signed-in request (token check, identity lookup, one row).
    const me = await load(app.url, 'GET', '/api/v1/users/me', undefined, seconds);

    // Withdrawals: each user takes WITHDRAW_USD at a time from one pool funded with FUND_USD first
    // (on both sides, through each side's own route), so every withdrawal of the run succeeds.
    const withdrawAgent = (user: number) => agentIds[user % AGENTS]!;
    await fund(app, users, withdrawAgent);
    await fund(conventional, users, withdrawAgent);
    await fund(lean, users, withdrawAgent);
    const withdrawLoad = (url: string) =>
      counted(url, {
        seconds: part,
        clients: users.map((u, i) => ({ method: 'POST', path: withdrawPath(withdrawAgent(i)), token: u.accessToken, bodies: [{ amountUsd: WITHDRAW_USD }] })),
      });
    const allWithdrawals = await pairedWith(sides, (side) => withdrawLoad(urlOf(side)));
    const withdrawals = allWithdrawals.conventional;
    const [withdraw, conventionalWithdraw, leanWithdraw] = [withdrawals.ours, withdrawals.conventional, allWithdrawals.lean.conventional];
    // Every 2xx moved exactly WITHDRAW_USD on its side (ours: once the projector caught up).
    // Every 2xx of the measured rounds and of the warm-up.
    const expectedOut = (r: LoadRun, warm: LoadRun) => Math.round((r.count - r.failures + warm.count - warm.failures) * WITHDRAW_USD * 100) / 100;
    let oursOut = await withdrawnUsd(app.deps.pool);
    for (const until = Date.now() + 5000; oursOut !== expectedOut(withdraw, withdrawals.warmup.ours) && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 50));
      oursOut = await withdrawnUsd(app.deps.pool);
    }
    const conventionalOut = await withdrawnUsd(conventional.db);
    const leanOut = await withdrawnUsd(lean.db);

    const projector = allProjectors.find((p) => p.name === 'subscriptions')!;
    const events = (await app.deps.pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n;
    const r0 = performance.now();
    await rebuild(app.deps.store, app.deps.pool, projector);
    const rebuildSeconds = (performance.now() - r0) / 1000;

    const ours = follow.failures + list.failures + me.failures + withdraw.failures;
    const conventionalFailures = conventionalFollow.failures + conventionalList.failures + conventionalWithdraw.failures;
    const leanFailures = leanFollow.failures + leanList.failures + leanWithdraw.failures;
    const moneyOk =
      oursOut === expectedOut(withdraw, withdrawals.warmup.ours) &&
      conventionalOut === expectedOut(conventionalWithdraw, withdrawals.warmup.conventional) &&
      leanOut === expectedOut(leanWithdraw, allWithdrawals.lean.warmup.conventional);
    const lagP99 = percentile(lagsMs, 99);
    const rowsNote =
      [conventionalRows, leanRows].every((r) => r.lo === rows.lo && r.hi === rows.hi) && rows.lo === rows.hi
        ? `${rows.lo} rows per answer on every side`
        : `ROW COUNTS DIFFER: ours ${rows.lo}..${rows.hi}, conventional ${conventionalRows.lo}..${conventionalRows.hi}, lean ${leanRows.lo}..${leanRows.hi}`;
    const load1 = loadavg()[0]!;
    console.log(
      `\nThe first flow over HTTP: ours against the conventional peers, like-for-like and lean (durable commits, ${CLIENTS} concurrent users in a separate client process; ${ROUNDS} rounds of ${fmt(Math.max(2, seconds / ROUNDS), 1)} s per side, the order turning each round; load average ${fmt(load1, 2)} on ${availableParallelism()} cores)`,
    );
    report([
      ['follow (POST subscriptions), ours', `${fmt(follow.perSecond)} /s`, `${latency(follow)}; ${follow.count} calls`],
      ['follow, conventional', `${fmt(conventionalFollow.perSecond)} /s`, `${latency(conventionalFollow)}; ${conventionalFollow.count} calls`],
      ['follow, lean', `${fmt(leanFollow.perSecond)} /s`, `${latency(leanFollow)}; ${leanFollow.count} calls`],
      ['follow, ours / conventional', fmt(follows.ratio, 2), ratioNote(follows, 0.6)],
      ['follow, ours / lean', fmt(allFollows.lean.ratio, 2), ratioNote(allFollows.lean, 0.9)],
      ['GET subscriptions, ours', `${fmt(list.perSecond)} /s`, `${latency(list)}; ${rowsNote}`],
      ['GET subscriptions, conventional', `${fmt(conventionalList.perSecond)} /s`, latency(conventionalList)],
      ['GET subscriptions, lean', `${fmt(leanList.perSecond)} /s`, latency(leanList)],
      ['GET subscriptions, ours / conventional', fmt(lists.ratio, 2), ratioNote(lists, 1.0)],
      ['GET subscriptions, ours / lean', fmt(allLists.lean.ratio, 2), ratioNote(allLists.lean, 1.5)],
      ['withdraw (POST …/allocation/withdraw), ours', `${fmt(withdraw.perSecond)} /s`, `${latency(withdraw)}; ${withdraw.count} calls of ${WITHDRAW_USD} USD`],
      ['withdraw, conventional', `${fmt(conventionalWithdraw.perSecond)} /s`, `${latency(conventionalWithdraw)}; ${conventionalWithdraw.count} calls`],
      ['withdraw, lean', `${fmt(leanWithdraw.perSecond)} /s`, `${latency(leanWithdraw)}; ${leanWithdraw.count} calls`],
      ['withdraw, ours / conventional', fmt(withdrawals.ratio, 2), ratioNote(withdrawals, 0.6)],
      ['withdraw, ours / lean', fmt(allWithdrawals.lean.ratio, 2), ratioNote(allWithdrawals.lean, 0.9)],
      [
        '    withdrawn, ours / conventional / lean',
        `${fmt(oursOut, 2)} / ${fmt(conventionalOut, 2)} / ${fmt(leanOut, 2)}`,
        `USD paid out by the pool rows; ${WITHDRAW_USD} USD per 2xx on each side: ${moneyOk ? 'matches' : 'DIFFERS'}`,
      ],
      [
        'non-2xx, ours',
        String(ours),
        `follow ${failed(follow)}, GET ${failed(list)}, floor ${failed(me)}, withdraw ${failed(withdraw)}; target 0: ${verdict(ours === 0)}`,
      ],
      [
        'non-2xx, conventional',
        String(conventionalFailures),
        `follow ${failed(conventionalFollow)}, GET ${failed(conventionalList)}, withdraw ${failed(conventionalWithdraw)}`,
      ],
      ['non-2xx, lean', String(leanFailures), `follow ${failed(leanFollow)}, GET ${failed(leanList)}, withdraw ${failed(leanWithdraw)}`],
      ['projector lag during our follows', `${fmt(lagP99, 1)} ms`, `p99 (p50 ${fmt(percentile(lagsMs, 50), 1)} ms); target <= 50 ms: ${verdict(lagP99 <= 50)}`],
      [
        '    projector batches',
        fmt(batchSizes.length),
        `mean ${fmt(batchSizes.reduce((a, b) => a + b, 0) / Math.max(1, batchSizes.length), 1)} events per batch (one transaction for all read models)`,
      ],
      ['    floor: GET /users/me, ours', `${fmt(me.perSecond)} /s`, `${latency(me)}: the cheapest signed-in request on our stack`],
      [
        '    client CPU per follow',
        `${fmt(follow.clientCpuMsPerRequest, 2)} ms`,
        `conventional run ${fmt(conventionalFollow.clientCpuMsPerRequest, 2)} ms; the load generator shares the cores`,
      ],
      [
        '    client CPU per withdrawal',
        `${fmt(withdraw.clientCpuMsPerRequest, 2)} ms`,
        `conventional run ${fmt(conventionalWithdraw.clientCpuMsPerRequest, 2)} ms`,
      ],
      ['    server + database CPU per follow', cpuPer(follow), `conventional ${cpuPer(conventionalFollow)}, lean ${cpuPer(leanFollow)}`],
      ['    server + database CPU per GET', cpuPer(list), `conventional ${cpuPer(conventionalList)}, lean ${cpuPer(leanList)}`],
      ['    server + database CPU per withdrawal', cpuPer(withdraw), `conventional ${cpuPer(conventionalWithdraw)}, lean ${cpuPer(leanWithdraw)}`],
      ['rebuild subscriptions model', `${fmt(Number(events) / rebuildSeconds)} ev/s`, `${events} events in ${fmt(rebuildSeconds, 2)} s`],
    ]);
  } finally {
    await conventional?.stop();
    await lean?.stop();
    await app.close();
  }
}
