// The webhook's figure: signed text signals that match nothing (channel chatter, most of what an
// agent's channel posts), each with a fresh signature, against the conventional baseline's follow
// measured in the same run as bench/http.ts measures it (16 users, 40 agents, the same bodies), in
// alternating rounds (bench/paired.ts); target: chatter/s >= 0.5 x the baseline's follows/s. Each
// chatter delivery is verified, its signature spent in Redis, read with the agent's rules and
// recorded (SignalReceived and SignalExecuted `unmatched` on a new signal stream).
import { startTestApp, type TestApp } from '../test/support/app.ts';
import { signIn, type SignedIn } from '../test/support/auth.ts';
import { listedFollowableAgent, type ListedAgent } from '../test/support/agents.ts';
import { startConventional, type Conventional } from './conventional/start.ts';
import { AGENTS, CLIENTS, followBodies, PATH, POOL_SIZE } from './http.ts';
import { fmt, report, verdict } from './measure.ts';
import { cpuPer, failed, latency, measuredLoad, paired, ratioNote, ROUNDS, type LoadRun } from './paired.ts';

const ADMIN = 'chatter-admin@example.test';
const CHATTER = { text: 'gm everyone' };

/** The bench's agents as bench/http.ts lists them (perp and spot in turn, live), with their signing secrets. */
async function listedAgents(app: TestApp, tokens: { developer: string; admin: string }): Promise<ListedAgent[]> {
  const agents: ListedAgent[] = [];
  for (let i = 0; i < AGENTS; i++) {
    const body = { name: `Chatter ${i}`, venue: i % 2 ? 'PERP_VENUE' : 'SPOT_VENUE', ...(i % 2 ? { maxLeverage: 10 } : {}) };
    agents.push(await listedFollowableAgent(app, tokens, body, { live: true }));
  }
  return agents;
}

/** Signals recorded, and how many of them unmatched, from the event log. */
async function recorded(app: TestApp): Promise<{ received: number; unmatched: number }> {
  const { rows } = await app.deps.pool.query<{ received: number; unmatched: number }>(
    `SELECT count(*) FILTER (WHERE event_type = 'SignalReceived')::int AS received,
            count(*) FILTER (WHERE event_type = 'SignalExecuted' AND data->>'outcome' = 'unmatched')::int AS unmatched
       FROM events WHERE stream_name LIKE 'signal-%'`,
  );
  return rows[0]!;
}

const answered = (r: LoadRun) => r.count - r.failures;

export async function chatterBench(seconds: number) {
  const app = await startTestApp({ durable: true, config: { ADMIN_EMAILS: ADMIN, DATABASE_POOL_SIZE: String(POOL_SIZE) } });
  let conventional: Conventional | undefined;
  try {
    const admin = await signIn(app, ADMIN);
    const developer = await signIn(app, 'chatter-dev@example.test');
    const agents = await listedAgents(app, { developer: developer.accessToken, admin: admin.accessToken });
    const agentIds = agents.map((a) => a.agentId);
    const users: SignedIn[] = [];
    for (let i = 0; i < CLIENTS; i++) users.push(await signIn(app, `chatter-user-${i}@example.test`));
    conventional = await startConventional(app, { userIds: users.map((u) => u.userId), agentIds }, POOL_SIZE);
    const baseline = conventional;

    const part = Math.max(2, seconds / ROUNDS);
    const chatterClients = users.map((_, i) => {
      const agent = agents[i % AGENTS]!;
      return { method: 'POST', path: `/api/v1/signals/${agent.agentId}`, webhookSecret: agent.secret, bodies: [CHATTER] };
    });
    let timestampsAfterMs = 0;
    const runs = await paired(async (side, round) => {
      if (side === 'ours') {
        const run = await measuredLoad(process.pid, app.deps.pool, { url: app.url, seconds: part, clients: chatterClients, timestampsAfterMs });
        timestampsAfterMs = run.signing?.lastTimestampMs ?? timestampsAfterMs;
        return run;
      }
      return measuredLoad(baseline.pid, baseline.db, {
        url: baseline.url,
        seconds: part,
        clients: users.map((u) => ({ method: 'POST', path: PATH, token: u.accessToken, bodies: followBodies(agentIds, round) })),
      });
    });
    const { ours: chatter, conventional: follow } = runs;
    const signals = await recorded(app);
    const expected = answered(chatter) + answered(runs.warmup.ours);
    const recordedOk = signals.received === expected && signals.unmatched === expected;

    console.log(
      `\nWebhook chatter: signed unmatched text signals against the conventional follow (durable commits, ${CLIENTS} concurrent clients in a separate process; ${ROUNDS} alternating rounds of ${fmt(part, 1)} s per side)`,
    );
    report([
      ['webhook chatter (POST signals, unmatched), ours', `${fmt(chatter.perSecond)} /s`, `${latency(chatter)}; ${chatter.count} calls, each signed anew`],
      ['follow, conventional', `${fmt(follow.perSecond)} /s`, `${latency(follow)}; ${follow.count} calls`],
      ['chatter, ours / conventional follow', fmt(runs.ratio, 2), ratioNote(runs, 0.5)],
      [
        '    recorded',
        `${fmt(signals.received)} / ${fmt(expected)}`,
        `signals recorded unmatched / 2xx answers (warm-up included): ${recordedOk ? 'matches' : `DIFFERS (${signals.unmatched} unmatched)`}`,
      ],
      ['non-2xx, ours', String(chatter.failures), `${failed(chatter)}; target 0: ${verdict(chatter.failures === 0)}`],
      ['non-2xx, conventional', String(follow.failures), failed(follow)],
      [
        '    client CPU per chatter delivery',
        `${fmt(chatter.clientCpuMsPerRequest, 2)} ms`,
        `per conventional follow ${fmt(follow.clientCpuMsPerRequest, 2)} ms; signing included`,
      ],
      ['    server + database CPU per chatter delivery', cpuPer(chatter), `per conventional follow ${cpuPer(follow)}`],
    ]);
    return { ratio: runs.ratio };
  } finally {
    await conventional?.stop();
    await app.close();
  }
}
