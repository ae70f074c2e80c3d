// The statements' figure: one pool of 10,000 events replayed into its statement (target <= 50 ms).
// The pool's history is decided by the pool's own decider from the auditors' bench's seeded random mix
// (bench/audit.ts, simulatedPool), written to the service's PostgreSQL store in appends of 1,000
// events, under a signed-in user's pool stream. Timed, as a statement of the pool is made
// (api/routes/statements/build.ts): the stream read, the fold to `at`, the figures, the lines and fee
// receipts since `from` (the last hour), the equity line, and the signature over the canonical JSON.
// The pool's replay resumes from the latest snapshot of its fold that serves the period
// (projections/statements/fold-snapshots.ts), as the routes' does: the figure with snapshots, and the
// cold one (the first statement: no snapshot, the whole stream read; the snapshots are written after
// it, as the routes' are, and waited for outside the time), and the statement from the whole stream
// without snapshots (the figure before them).
// Beside it, without a target: the same statement through HTTP (GET …/subscriptions/:agentId/statement,
// from the request to the whole answer read: what a user waits for), the read alone, the fold alone,
// and the same statement with every one of the 10,000 lines (no `from`).
import { poolPart } from '../api/routes/statements/build.ts';
import { poolStatement } from '../domain/pool/statement.ts';
import { poolId as poolIdOf } from '../domain/pool/state.ts';
import type { AppendResult } from '../infra/eventstore/port.ts';
import { signStatement, statementKeys } from '../infra/statement-keys.ts';
import { statementHistory } from '../projections/statements/fold-snapshots.ts';
import { poolHistory } from '../projections/subscriptions/audit.ts';
import { startTestApp } from '../test/support/app.ts';
import { signIn } from '../test/support/auth.ts';
import { simulatedPool } from './audit.ts';
import { fmt, percentile, report, verdict } from './measure.ts';

const EVENTS = 10_000;
const APPEND = 1_000;
const RUNS = 30;
const TARGET_MS = 50;

async function timedMs(runs: number, op: () => Promise<unknown>, setup?: () => Promise<unknown>): Promise<number[]> {
  await setup?.();
  await op();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    await setup?.();
    const t0 = performance.now();
    await op();
    ms.push(performance.now() - t0);
  }
  return ms;
}

/** Each op timed in turn, round after round (a round's setups untimed); each op's times. */
async function interleaved(runs: number, ops: Array<[op: () => Promise<unknown>, setup: () => Promise<unknown>]>): Promise<number[][]> {
  const ms = ops.map(() => [] as number[]);
  for (let round = -1; round < runs; round++) {
    for (const [i, [op, setup]] of ops.entries()) {
      await setup();
      const t0 = performance.now();
      await op();
      if (round >= 0) ms[i]!.push(performance.now() - t0);
    }
  }
  return ms;
}

const spread = (ms: number[]) => `median ${fmt(percentile(ms, 50), 1)} ms, p95 ${fmt(percentile(ms, 95), 1)} ms over ${ms.length} runs`;

export async function statementBench(events = EVENTS) {
  // NODE_ENV development: answers are not also encoded by zod and compared, as under test (api/plugins/serializer.ts).
  const app = await startTestApp({ config: { NODE_ENV: 'development' } });
  try {
    const user = await signIn(app, 'statement-bench@example.test');
    const { stream: simulatedStream, events: simulated } = simulatedPool(7, events);
    const history = simulated.slice(0, events);
    const [, agentId, walletContext] = simulatedStream.slice('pool-'.length).split('.') as [string, string, 'virtual' | 'real'];
    const poolId = poolIdOf(user.userId, agentId, walletContext);
    const { store } = app.deps;
    const w0 = performance.now();
    let last: AppendResult | undefined;
    for (let i = 0; i < history.length; i += APPEND) {
      const batch = history.slice(i, i + APPEND).map(({ event, at }) => ({
        type: event.type,
        data: event.data,
        metadata: { correlationId: poolId, actor: 'bench', occurredAt: at.toISOString() },
      }));
      last = await store.append(`pool-${poolId}`, batch, { expectedRevision: i === 0 ? 'no_stream' : BigInt(i - 1) });
    }
    const writeMs = performance.now() - w0;
    // the projectors have folded the pool before anything is timed
    await app.deps.readYourWrites(last?.position);
    const at = history.at(-1)!.at;
    const from = new Date(at.getTime() - 3600_000);
    const keys = statementKeys({ JWT_SECRET: 'bench-statement-secret-of-32-characters!' });
    const { snapshotWrites } = app.deps;
    const snapshotDeps = { store, pool: app.deps.pool };
    const sign = (part: ReturnType<typeof poolPart>) => signStatement(keys, { userId: user.userId, at: at.toISOString(), pools: [part] });
    // as the routes' statement: the snapshots due written once it is made (api/routes/statements/index.ts)
    const statementOf = async (since: Date | undefined) => {
      let done = () => {};
      const made = new Promise<void>((resolve) => {
        done = resolve;
      });
      const later = (streamName: string, write: () => Promise<unknown>) => snapshotWrites.later(streamName, write, made);
      try {
        const { history, snapshot } = await statementHistory({ ...snapshotDeps, snapshotWrites: { later } }, poolId, at, since);
        return await sign(poolPart(history, agentId, walletContext, at, since, snapshot));
      } finally {
        done();
      }
    };
    // the snapshots written before the answer (the statement before they moved after it; `npm run audit -- statement` still does)
    const writingStatementOf = async (since: Date | undefined) => {
      const { history, snapshot } = await statementHistory(snapshotDeps, poolId, at, since);
      return sign(poolPart(history, agentId, walletContext, at, since, snapshot));
    };
    const wholeStatementOf = async (since: Date | undefined) => sign(poolPart(await poolHistory(store, poolId), agentId, walletContext, at, since));
    const dropSnapshots = async () => {
      await snapshotWrites.idle();
      await app.deps.pool.query('DELETE FROM pool_fold_snapshots WHERE stream_name = $1', [`pool-${poolId}`]);
    };
    const path = `/api/v1/users/me/subscriptions/${agentId}/statement?walletContext=${walletContext}&at=${encodeURIComponent(at.toISOString())}&from=${encodeURIComponent(from.toISOString())}`;
    let bytes = 0;
    const overHttp = async () => {
      const res = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${user.accessToken}` } });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`statement over HTTP: ${res.status} ${body.slice(0, 300)}`);
      bytes = body.length;
    };
    const loaded = await poolHistory(store, poolId);
    const lines = poolStatement(loaded, at, from).lines.length;

    // the cold ones and a whole-stream one taken in turn, round by round: the shared machine's load moves all three alike
    const [cold, coldWriting, wholeBeside] = await interleaved(Math.ceil(RUNS / 2), [
      [() => statementOf(from), dropSnapshots],
      [() => writingStatementOf(from), dropSnapshots],
      [() => wholeStatementOf(from), () => snapshotWrites.idle()],
    ]);
    await snapshotWrites.idle();
    const replay = await timedMs(RUNS, () => statementOf(from));
    const resumed = await statementHistory(snapshotDeps, poolId, at, from);
    const http = await timedMs(RUNS, overHttp);
    const tailRead = await timedMs(RUNS, () => statementHistory(snapshotDeps, poolId, at, from));
    const tailFold = await timedMs(RUNS, async () => poolStatement(resumed.history, at, from, resumed.snapshot));
    const whole = await timedMs(RUNS, () => wholeStatementOf(from));
    const read = await timedMs(RUNS, () => poolHistory(store, poolId));
    const fold = await timedMs(RUNS, async () => poolStatement(loaded, at, from));
    // the whole history read: its snapshots already stored, none handed (one query for their revisions); a write would be waited for outside the time
    const everyLine = await timedMs(
      Math.ceil(RUNS / 3),
      () => statementOf(undefined),
      () => snapshotWrites.idle(),
    );
    const median = percentile(replay, 50);
    const after = resumed.snapshot
      ? `the ${fmt(resumed.history.length)} events after the snapshot at revision ${fmt(resumed.snapshot.revision)}`
      : 'no snapshot';
    console.log(`\nStatements (PostgreSQL store, one pool of ${fmt(loaded.length)} events, ${fmt(lines)} lines in the last hour)`);
    report([
      ['pool written', `${fmt(writeMs)} ms`, `appends of ${fmt(APPEND)} events`],
      [
        'statement: read, replay, sign',
        `${fmt(median, 1)} ms`,
        `${spread(replay)}; with snapshots (${after}); target <= ${TARGET_MS} ms: ${verdict(median <= TARGET_MS)}`,
      ],
      ['the first one (cold)', `${fmt(percentile(cold, 50), 1)} ms`, `${spread(cold)}; no snapshot: the whole stream read, the snapshots written after it`],
      ['  the whole-stream one beside it', `${fmt(percentile(wholeBeside, 50), 1)} ms`, `${spread(wholeBeside)}; in turn with the cold ones`],
      [
        'the first one, writing them before',
        `${fmt(percentile(coldWriting, 50), 1)} ms`,
        `${spread(coldWriting)}; the figure before they moved after the answer`,
      ],
      ['the same through HTTP', `${fmt(percentile(http, 50), 1)} ms`, `${spread(http)}; request to the whole answer (${fmt(bytes / 1024)} KB), one client`],
      ['snapshot and stream read alone', `${fmt(percentile(tailRead, 50), 1)} ms`, spread(tailRead)],
      ['replay alone from the snapshot', `${fmt(percentile(tailFold, 50), 1)} ms`, spread(tailFold)],
      ['statement from the whole stream', `${fmt(percentile(whole, 50), 1)} ms`, `${spread(whole)}; without snapshots (the figure before them)`],
      ['whole stream read and decoded alone', `${fmt(percentile(read, 50), 1)} ms`, spread(read)],
      ['replay alone from the first event', `${fmt(percentile(fold, 50), 1)} ms`, spread(fold)],
      ['statement with every line', `${fmt(percentile(everyLine, 50), 1)} ms`, `${spread(everyLine)}; ${fmt(loaded.length)} ledger lines rendered`],
    ]);
    return { medianMs: median, httpMedianMs: percentile(http, 50) };
  } finally {
    await app.close();
  }
}
