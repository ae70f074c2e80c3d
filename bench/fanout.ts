// The fan-out figure: one signed open signal to the 1,000 follower pools of a perp agent,
// the service as `npm start` runs it (API, projectors and the signal worker in one process, durable
// commits). Measured from the request's arrival (the client's send): the last trade recorded (its
// fill committed in the event store; target <= 1 s), the last trade projected in the trades read
// model, and the webhook's answer (it waits for the fan-out); the load average beside them.
import { loadavg } from 'node:os';
import type { EventStore } from '../infra/eventstore/port.ts';
import { signWebhookBody } from '../infra/signing/webhook.ts';
import { api, startTestApp, type TestApp } from '../test/support/app.ts';
import { manyUsers, signIn } from '../test/support/auth.ts';
import { listedFollowableAgent, type ListedAgent } from '../test/support/agents.ts';
import { backendsCpuMs, backendsCpuSinceMs, processCpuMs } from './cpu.ts';
import { fmt, report, verdict } from './measure.ts';

const ADMIN = 'fanout-admin@example.test';
/** A first, unmeasured signal to this many pools of another agent: JIT, connections, caches. */
const WARM_UP_POOLS = 32;
const FOLLOW_LANES = 16;
const TARGET_MS = 1_000;

/** A perp agent whose followers the fan-out benches trade for. */
export const fanoutAgent = (app: TestApp, tokens: { developer: string; admin: string }, name: string) =>
  listedFollowableAgent(
    app,
    tokens,
    { name, venue: 'PERP_VENUE', maxLeverage: 10, minTradeUsd: 1, recommendedPerTradePercent: 10, maxConcurrentPositions: 5 },
    { live: true },
  );

/** `count` users each following the agent with 1,000 USD, through the real route, FOLLOW_LANES at a time. */
export async function followers(app: TestApp, agentId: string, prefix: string, count: number): Promise<void> {
  const users = await manyUsers(app, prefix, count);
  let next = 0;
  const lane = async () => {
    while (next < users.length) {
      const user = users[next++]!;
      const res = await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId, allocationAmountUsd: 1000 } });
      if (res.status !== 200) throw new Error(`follow: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  await Promise.all(Array.from({ length: FOLLOW_LANES }, lane));
}

/**
 * The fan-out benches' setting: `admin` and `${prefix}-dev` signed in, BTC priced at 50,000, a warm-up agent followed by
 * WARM_UP_POOLS users and the measured agent `name` by `pools`; `setupSeconds` is the time the follows took.
 */
export async function fanoutSetting(app: TestApp, setting: { admin: string; prefix: string; name: string; pools: number }) {
  const admin = await signIn(app, setting.admin);
  const developer = await signIn(app, `${setting.prefix}-dev@example.test`);
  const tokens = { developer: developer.accessToken, admin: admin.accessToken };
  const priced = await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { BTC: 50_000 } } });
  if (priced.status !== 200) throw new Error(`prices: ${priced.status}`);
  const warm = await fanoutAgent(app, tokens, `${setting.name} warm-up`);
  const agent = await fanoutAgent(app, tokens, setting.name);
  const s0 = performance.now();
  await followers(app, warm.agentId, `${setting.prefix}-warm`, WARM_UP_POOLS);
  await followers(app, agent.agentId, setting.prefix, setting.pools);
  return { warm, agent, setupSeconds: (performance.now() - s0) / 1000 };
}

/** One signed signal webhook opening a BTC long (the fan-out benches' signal). */
export function deliver(app: TestApp, agent: ListedAgent, signalId: string) {
  const body = { signalId, action: 'open', side: 'long', token: 'BTC', leverage: 5, sizePercent: 10, stopLoss: 48_000, takeProfit: [52_000, 54_000] };
  const signed = signWebhookBody({ secret: agent.secret, body, timestampMs: Date.now() });
  return api(app, 'POST', `/api/v1/signals/${agent.agentId}`, {
    body,
    headers: { 'x-svc-timestamp': signed.timestampHeader, 'x-svc-signature': signed.signatureHeader },
  });
}

/** When the projections committed the fill of the `target`-th trade counted since `reset`. */
function projectedTrades() {
  let filled = 0;
  let target = Infinity;
  let reachedAt: number | null = null;
  let reached: () => void = () => {};
  return {
    onCommitted(events: Array<{ type: string; streamName: string }>, committedAt: number) {
      filled += events.filter((e) => e.type === 'TradeFilled' && e.streamName.startsWith('trade-')).length;
      if (reachedAt === null && filled >= target) {
        reachedAt = committedAt;
        reached();
      }
    },
    /** resolves with the commit time (epoch ms) of the `count`-th fill from now on */
    expect(count: number): Promise<number> {
      [filled, target, reachedAt] = [0, count, null];
      return new Promise((resolve) => (reached = () => resolve(reachedAt!)));
    },
  };
}

/**
 * When the store confirmed the append of the `count`-th trade fill since `expect` (epoch ms): the
 * appends the command room makes go through the store's `append`, wrapped here.
 */
function recordedTrades(store: EventStore) {
  let filled = 0;
  let target = Infinity;
  let reached: (at: number) => void = () => {};
  const append = store.append.bind(store);
  (store as { append: EventStore['append'] }).append = async (streamName, events, options) => {
    const result = await append(streamName, events, options);
    if (streamName.startsWith('trade-') && events.some((e) => e.type === 'TradeFilled') && ++filled === target) reached(Date.now());
    return result;
  };
  return {
    expect(count: number): Promise<number> {
      [filled, target] = [0, count];
      return new Promise((resolve) => (reached = resolve));
    },
  };
}

/** The signal's span in the event log: from its arrival to its recorded outcome, in ms. */
async function executionMs(app: TestApp, agentId: string): Promise<number> {
  const { rows } = await app.deps.pool.query<{ ms: number }>(
    `SELECT (extract(epoch FROM max(created_at) FILTER (WHERE event_type = 'SignalExecuted') - min(created_at) FILTER (WHERE event_type = 'SignalReceived')) * 1000)::float AS ms
       FROM events WHERE stream_name LIKE $1`,
    [`signal-${agentId}.%`],
  );
  return rows[0]!.ms;
}

export async function fanoutBench(pools = 1_000) {
  const projected = projectedTrades();
  const app = await startTestApp({
    durable: true,
    // The answer's bound is the deployment's (SIGNAL_ANSWER_TIMEOUT_MS, 10 s): past it, the answer is `accepted`.
    config: { ADMIN_EMAILS: ADMIN, DATABASE_POOL_SIZE: '24' },
    runnerOptions: { onCommitted: (events, committedAt) => projected.onCommitted(events, committedAt) },
  });
  try {
    const { warm, agent, setupSeconds } = await fanoutSetting(app, { admin: ADMIN, prefix: 'fanout', name: 'Fan-out', pools });

    const warmed = projected.expect(WARM_UP_POOLS);
    const warmAnswer = await deliver(app, warm, 'warm-up');
    if (warmAnswer.body?.data?.outcome !== 'executed') throw new Error(`warm-up: ${warmAnswer.status} ${JSON.stringify(warmAnswer.body)}`);
    await warmed;

    const recorded = recordedTrades(app.deps.store);
    const lastRecorded = recorded.expect(pools);
    const lastProjected = projected.expect(pools);
    const loadBefore = loadavg()[0]!;
    const [process0, backends0] = [processCpuMs(process.pid), await backendsCpuMs(app.deps.pool)];
    const sent = Date.now();
    const answer = await deliver(app, agent, 'fanout-1');
    const answeredAt = Date.now();
    const lastRecordedAt = await lastRecorded;
    // CPU until the last trade recorded (this process: API, worker, projectors; the database's backends): the figure a busy machine changes least.
    const cpu = { processMs: processCpuMs(process.pid) - process0, databaseMs: await backendsCpuSinceMs(app.deps.pool, backends0) };
    const lastProjectedAt = await lastProjected;
    const loadAfter = loadavg()[0]!;
    const { outcome, executionResults } = answer.body.data as { outcome: string; executionResults: Array<{ executionResult: { status: string } }> };
    const executed = executionResults.filter((r) => r.executionResult.status === 'executed').length;
    const { rows } = await app.deps.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM trades WHERE agent_id = $1 AND status = 'open'`, [agent.agentId]);
    const spanMs = await executionMs(app, agent.agentId);
    const answerMs = answeredAt - sent;
    const recordedMs = lastRecordedAt - sent;

    console.log(
      `\nOne signal to ${fmt(pools)} follower pools (perp, 10% of free capital each; API, projectors and signal worker in one process, durable commits; ${fmt(setupSeconds, 1)} s to follow; load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after)`,
    );
    report([
      [
        'arrival to last trade recorded',
        `${fmt(recordedMs)} ms`,
        `${fmt((pools / recordedMs) * 1000)} trades/s; from the client's send to the last fill committed in the event store; target <= ${fmt(TARGET_MS)} ms: ${verdict(recordedMs <= TARGET_MS)}`,
      ],
      ['    arrival to last trade projected', `${fmt(lastProjectedAt - sent)} ms`, `${rows[0]!.n} open trades in the trades read model`],
      [
        '    webhook answer latency',
        `${fmt(answerMs)} ms`,
        `outcome ${outcome}, ${executed} of ${executionResults.length} pools executed; it waits for the fan-out`,
      ],
      ['    signal received to outcome recorded', `${fmt(spanMs)} ms`, 'in the event log'],
      ['    CPU to the last trade recorded', `${fmt(cpu.processMs)} ms`, `the service's process; the database's backends ${fmt(cpu.databaseMs)} ms`],
    ]);
    return { recordedMs, answerMs, tradesPerSecond: (pools / recordedMs) * 1000 };
  } finally {
    await app.close();
  }
}
