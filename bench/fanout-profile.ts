// `node --import=tsx bench/fanout-profile.ts [--pools N] [--save file.cpuprofile]`: where the fan-out's
// time goes. The fan-out bench's setup (bench/fanout.ts), then one signal with: the appends' timeline
// per kind of stream (from the client's send), the SQL statements by name, the CPU of the process and
// of the database's backends, and the process's CPU profile by file and function.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Session } from 'node:inspector/promises';
import type { EventData } from '../infra/eventstore/port.ts';
import { startTestApp } from '../test/support/app.ts';
import { cpuDuring } from './cpu.ts';
import { deliver, fanoutSetting } from './fanout.ts';
import { countStatements } from './statements.ts';

const arg = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const pools = Number(arg('pools') ?? 1_000);
const savePath = arg('save');
const ADMIN = 'fanout-profile-admin@example.test';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** Samples (idle left out) to the innermost frame of this project's code on the stack. */
function byCaller(profile: { nodes: Node[]; samples: number[]; timeDeltas: number[] }, n: number, withFunction: boolean): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const sum = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const leaf = byId.get(id)!.callFrame;
    if (leaf.functionName === '(idle)') return;
    total += profile.timeDeltas[i]!;
    let key = `(no code of ours) ${leaf.url.includes('node_modules/') ? leaf.url.split('node_modules/').pop()!.split('/')[0] : leaf.url || leaf.functionName}`;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url } = byId.get(at)!.callFrame;
      if (!url.startsWith('file://') || url.includes('node_modules/') || url.includes('/bench/')) continue;
      const place = url.replace(/^file:\/\/\/.*?\/(main|wt-[^/]+)\//, '');
      key = withFunction ? `${functionName || '(anonymous)'}  ${place}` : place;
      break;
    }
    sum.set(key, (sum.get(key) ?? 0) + profile.timeDeltas[i]!);
  });
  return [...sum.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${(v / 1000).toFixed(0).padStart(5)} ms  ${k}`);
}

const app = await startTestApp({ durable: true, config: { ADMIN_EMAILS: ADMIN, DATABASE_POOL_SIZE: '24' } });
try {
  const { warm, agent } = await fanoutSetting(app, { admin: ADMIN, prefix: 'fanout-profile', name: 'Profile', pools });
  const warmAnswer = await deliver(app, warm, 'warm-up');
  if (warmAnswer.body?.data?.outcome !== 'executed') throw new Error(`warm-up: ${JSON.stringify(warmAnswer.body)}`);
  await new Promise((r) => setTimeout(r, 2_000));

  // The appends' timeline: per kind of stream, how many, the first and the last resolved (ms since the send).
  let sent = 0;
  const kinds = new Map<string, { count: number; first: number; last: number; ms: number }>();
  const { store } = app.deps;
  const append = store.append.bind(store);
  (store as { append: typeof store.append }).append = async (streamName: string, events: EventData[], options) => {
    const t0 = performance.now();
    const result = await append(streamName, events, options);
    const at = performance.now() - sent;
    const kind = `${streamName.split('-', 1)[0]} ${events.map((e) => e.type).join('+')}`;
    const k = kinds.get(kind) ?? { count: 0, first: at, last: at, ms: 0 };
    kinds.set(kind, { count: k.count + 1, first: k.first, last: at, ms: k.ms + performance.now() - t0 });
    return result;
  };
  const { statements, stop: stopCounting } = countStatements();

  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  const load = loadavg()[0]!;
  sent = performance.now();
  const { result: answer, cpu } = await cpuDuring(process.pid, app.deps.pool, () => deliver(app, agent, 'profiled-1'));
  const answerMs = performance.now() - sent;
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  stopCounting();
  if (savePath) writeFileSync(savePath, JSON.stringify(profile));

  console.log(
    `\n${pools} pools: outcome ${answer.body?.data?.outcome}, answer ${answerMs.toFixed(0)} ms, load ${load.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after`,
  );
  console.log(`CPU during the send to the answer: process ${cpu.serverMs} ms, database backends ${cpu.databaseMs} ms`);
  console.log('\nAppends by stream kind and events: count, first and last resolved (ms from the send), mean latency');
  for (const [kind, k] of [...kinds.entries()].sort((a, b) => a[1].first - b[1].first))
    console.log(
      `  ${String(k.count).padStart(5)}  ${k.first.toFixed(0).padStart(6)} → ${k.last.toFixed(0).padStart(6)} ms  ${(k.ms / k.count).toFixed(1).padStart(6)} ms  ${kind.slice(0, 90)}`,
    );
  console.log('\nSQL statements (all of the process, projectors included):');
  for (const [text, n] of [...statements.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${String(n).padStart(6)}  ${text}`);
  console.log('\nProcess time by the innermost file of ours on the stack (idle left out):');
  for (const line of byCaller(profile as never, 25, false)) console.log(`  ${line}`);
  console.log('\nThe same per function:');
  for (const line of byCaller(profile as never, 40, true)) console.log(`  ${line}`);
} finally {
  await app.close();
}
process.exit(0);
