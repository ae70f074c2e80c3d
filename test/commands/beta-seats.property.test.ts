// Beta seats under racing follows, stops, re-follows and seat sweeps, property-based, on the real
// command code: each schedule runs random requests at once on three logical service processes
// (each its own dispatcher, cache and single-writer queues over one in-memory log,
// test/support/memory-store.ts), and fast-check's scheduler picks the order in which every stream
// read and append happens and in which its caller sees the result. Some follows die at an append
// (a process killed), their claims left to the recovery. Then time moves past the grace period: the
// recovery's sweeps and transfer resumptions run (scheduled too), and a last sweep.
//
// Checked after every scheduled step, on the log itself:
// 1. every open pool of the beta agent is open with a seat claim its user holds in a seat shard;
// 2. no shard holds more users than its share, so the seats held never exceed maxBetaUsers.
// Checked after every schedule:
// 3. every follow answered with an open pool holds what it answered (allocationAmountUsd equals
//    allocatedUsd: in the race every user asks the same amount, and a follow never withdraws); every
//    refusal is a business one (BETA_FULL, UNPROCESSABLE after a refunded credit, or a stop of a
//    pool not followed), never a lost race;
// 4. once the recovery ran, the seats are held by exactly the followers, and each user's wallet plus
//    pool holds the start, to the micro-USD.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { createDispatcher, type Dispatch } from '../../commands/dispatch.ts';
import type { CommandDeps } from '../../commands/tools.ts';
import type { CommandMap, CommandType } from '../../commands/command-map.ts';
import { subscribeInput } from '../../commands/subscriptions/subscribe-input.ts';
import { seatShardDecider, seatShardId, shardCapacities, type AgentEvent, type SeatShard } from '../../domain/agent/index.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import { allocatedUsd } from '../../domain/pool/ledger.ts';
import { poolId, poolStream, type PoolState } from '../../domain/pool/state.ts';
import { DomainError, type ErrorReason } from '../../domain/shared/errors.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { balanceOf, walletStream } from '../../domain/wallet/state.ts';
import { loadConfig } from '../../infra/config.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import { betaAgentEvents } from '../support/agent-events.ts';
import { MemoryLog } from '../support/memory-store.ts';

const AGENT = 'a1';
const START = 10_000_000_000;
const GRACE_MS = 10_000;
const T0 = new Date('2025-05-01T12:00:00.000Z');
const AFTER_GRACE = new Date(T0.getTime() + GRACE_MS + 1_000);
const PROCESSES = 3;
const DIED = 'the process died';
const config = loadConfig({
  NODE_ENV: 'test',
  VIRTUAL_START_USD: String(START / 1e6),
  TRANSFER_RECOVERY_GRACE_MS: String(GRACE_MS),
  COMMAND_DEADLINE_MS: '60000',
});

type Op =
  | { kind: 'follow' | 'stop' | 'sweep'; user: number; process: number }
  /** a follow whose process dies at its `dieAt`-th append (before or at its credit) */
  | { kind: 'crash'; user: number; dieAt: number };

interface Run {
  cap: number;
  users: number;
  /** users following before the race (in order; those beyond the cap are refused) */
  seated: number[];
  ops: Op[];
}

const run: fc.Arbitrary<Run> = fc.record({ cap: fc.integer({ min: 1, max: 3 }), users: fc.integer({ min: 2, max: 4 }) }).chain(({ cap, users }) =>
  fc.record({
    cap: fc.constant(cap),
    users: fc.constant(users),
    seated: fc.uniqueArray(fc.nat({ max: users - 1 }), { maxLength: users }),
    ops: fc.array(
      fc.oneof(
        {
          weight: 4,
          arbitrary: fc.record({
            kind: fc.constantFrom('follow', 'stop') as fc.Arbitrary<'follow' | 'stop'>,
            user: fc.nat({ max: users - 1 }),
            process: fc.nat({ max: PROCESSES - 1 }),
          }),
        },
        { weight: 1, arbitrary: fc.record({ kind: fc.constant('sweep' as const), user: fc.nat({ max: users - 1 }), process: fc.nat({ max: PROCESSES - 1 }) }) },
        { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), user: fc.nat({ max: users - 1 }), dieAt: fc.integer({ min: 1, max: 3 }) }) },
      ),
      { minLength: 2, maxLength: 9 },
    ),
  }),
);

/** What the schedules went through, so that a generator that stops reaching a path fails the test. */
const seen = { refollowRejectedAfterStop: 0, claimAddedToHeldSeat: 0, claimGivenBackSeatKept: 0, betaFull: 0, crashed: 0, sweptAfterGrace: 0, replanned: 0 };

const userId = (u: number) => `u${u}`;
/** What each user's follows ask for in the race; the users seated before it asked for 5 USD less, so a re-follow tops up. */
const amountMicro = (u: number) => (20 + u) * 1_000_000;
const seatedMicro = (u: number) => amountMicro(u) - 5_000_000;

function agentEvents(cap: number): AgentEvent[] {
  return betaAgentEvents(T0.toISOString(), { agentId: AGENT, developerId: 'dev', name: 'Beta', maxBetaUsers: cap, minAllocationMicroUsd: 1_000_000 });
}

/** The world of one schedule: the log, its processes, and what it folds of them. */
class World {
  readonly log = new MemoryLog();
  private ids = 0;
  constructor(readonly r: Run) {
    this.log.append(
      'agent-a1',
      agentEvents(r.cap).map((e) => ({ ...e, metadata: { correlationId: 'setup', actor: 'test', occurredAt: T0.toISOString() } })),
      'no_stream',
    );
  }

  dispatcher(store: EventStore): Dispatch {
    const ids = { uuid: () => `id-${++this.ids}`, token: () => 'token', digits: () => '0' };
    const deps = { store, ids, config, mailer: { send: async () => {} } } as unknown as CommandDeps;
    return createDispatcher(deps);
  }

  send<T extends CommandType>(dispatch: Dispatch, type: T, data: CommandMap[T]['data'], now = T0): Promise<CommandMap[T]['result']> {
    return dispatch({ type, data, metadata: { now, actor: 'test', correlationId: `c-${++this.ids}` } }).then((d) => d.result);
  }

  pool(u: number): PoolState {
    return this.log.read(poolStream(poolId(userId(u), AGENT, 'virtual'))).reduce((s, e) => poolDecider.evolve(s, e as never), poolDecider.initialState());
  }

  shards(): SeatShard[] {
    return shardCapacities(this.r.cap).map((_, k) =>
      this.log.read(seatShardDecider.streamOf(seatShardId(AGENT, k))).reduce((s, e) => seatShardDecider.evolve(s, e as never), seatShardDecider.initialState()),
    );
  }

  /** 1 and 2, on the log as it is now. */
  checkSeats(): void {
    const shards = this.shards();
    shardCapacities(this.r.cap).forEach(
      (capacity, k) => void assert.ok(shards[k]!.holders.length <= capacity, `shard ${k} holds ${shards[k]!.holders.length} for ${capacity} seats`),
    );
    for (let u = 0; u < this.r.users; u++) {
      const pool = this.pool(u);
      if (!pool.followed) continue;
      assert.ok(pool.seatClaim !== undefined, `${userId(u)}: a beta pool opened without a seat claim`);
      const held = shards.some((s) => s.claims.get(userId(u))?.some((c) => c.claimId === pool.seatClaim));
      assert.ok(held, `${userId(u)}: the pool is open with claim ${pool.seatClaim}, which no shard holds`);
    }
  }

  /** 4: the seats are the followers', and money is where it was. */
  checkSettled(): void {
    const holders = new Set(this.shards().flatMap((s) => s.holders));
    for (let u = 0; u < this.r.users; u++) {
      const pool = this.pool(u);
      assert.equal(holders.has(userId(u)), pool.followed, `${userId(u)}: ${pool.followed ? 'follows without' : 'holds'} a seat once the recovery ran`);
      const wallet = this.log.read(walletStream(userId(u))).reduce((s, e) => walletDecider.evolve(s, e as never), walletDecider.initialState());
      const total = balanceOf(wallet, 'virtual', START) + (pool.followed ? allocatedUsd(pool.ledger) : 0);
      assert.equal(total, START, `${userId(u)}: wallet plus pool`);
      if (pool.followed)
        assert.ok([amountMicro(u), seatedMicro(u)].includes(allocatedUsd(pool.ledger)), `${userId(u)}: the pool holds ${allocatedUsd(pool.ledger)}`);
    }
  }
}

const allowed: Partial<Record<string, ErrorReason[]>> = {
  follow: ['BETA_FULL', 'UNPROCESSABLE'],
  stop: ['SUBSCRIPTION_NOT_FOUND'],
  sweep: [],
  crash: ['BETA_FULL', 'UNPROCESSABLE'],
};

async function play(s: fc.Scheduler, r: Run): Promise<void> {
  const world = new World(r);
  const scheduled =
    (p: string) =>
    async <T>(what: string, call: () => T): Promise<T> => {
      await s.schedule(Promise.resolve(), `${p} ${what}`);
      const result = call();
      await s.schedule(Promise.resolve(), `${p} ${what} answered`);
      return result;
    };
  const processes = Array.from({ length: PROCESSES }, (_, p) => world.dispatcher(world.log.view(scheduled(`p${p}`))));
  const quiet = world.dispatcher(world.log.view());
  const follow = (dispatch: Dispatch, u: number, micro = amountMicro(u)) =>
    world.send(dispatch, 'FollowAgent', {
      userId: userId(u),
      input: subscribeInput.parse({ agentId: AGENT, walletContext: 'virtual', allocationAmountUsd: micro / 1e6 }),
    });
  for (const u of r.seated)
    await follow(quiet, u, seatedMicro(u)).catch((err) => assert.ok(err instanceof DomainError && err.reason === 'BETA_FULL', String(err)));

  const dying = (dieAt: number) => {
    let appends = 0;
    const around = scheduled('dying');
    return world.dispatcher(
      world.log.view((what, call) => (what.startsWith('append') && ++appends >= dieAt ? Promise.reject(new Error(DIED)) : around(what, call))),
    );
  };
  const perform = (op: Op): Promise<unknown> => {
    const data = { userId: userId(op.user), agentId: AGENT };
    switch (op.kind) {
      case 'follow':
        return follow(processes[op.process]!, op.user);
      case 'crash':
        return follow(dying(op.dieAt), op.user);
      case 'stop':
        return world.send(processes[op.process]!, 'StopFollowing', { ...data, walletContext: 'virtual' });
      case 'sweep':
        return world.send(processes[op.process]!, 'ReleaseOrphanSeat', data);
    }
  };
  const act = async (f: () => Promise<unknown>) => {
    await f();
    world.checkSeats();
  };
  const outcomes = await s.waitFor(Promise.allSettled(r.ops.map(perform)), act);
  outcomes.forEach((o, i) => {
    const op = r.ops[i]!;
    if (o.status === 'rejected') {
      const err: unknown = o.reason;
      if (op.kind === 'crash' && err instanceof Error && err.message === DIED) {
        seen.crashed++;
        return;
      }
      assert.ok(err instanceof DomainError && allowed[op.kind]!.includes(err.reason), `${op.kind} of ${userId(op.user)} refused: ${String(err)}`);
      if (err.reason === 'BETA_FULL') seen.betaFull++;
      return;
    }
    if (op.kind !== 'follow' && op.kind !== 'crash') return;
    const { pool } = o.value as CommandMap['FollowAgent']['result'];
    if (pool.followed)
      assert.equal(
        pool.settings.allocationAmountUsd,
        allocatedUsd(pool.ledger),
        `${userId(op.user)}: the follow answered ${pool.settings.allocationAmountUsd}, the pool holds ${allocatedUsd(pool.ledger)}`,
      );
  });

  // The recovery, past the grace period: sweeps and resumed transfers at once, then a last sweep.
  const recovery = processes[0]!;
  const later = (type: 'ReleaseOrphanSeat', u: number) => world.send(recovery, type, { userId: userId(u), agentId: AGENT }, AFTER_GRACE);
  // Every transfer the users' streams debited, resumed as the recovery would (a finished one changes nothing).
  const debited = Array.from({ length: r.users }, (_, u) => [walletStream(userId(u)), poolStream(poolId(userId(u), AGENT, 'virtual'))]).flatMap((streams) =>
    streams.flatMap((stream) =>
      world.log
        .read(stream)
        .flatMap((e) =>
          e.type === 'WalletDebited' || e.type === 'WithdrawalRequested'
            ? [{ transferId: (e.data as { transfer: { transferId: string } }).transfer.transferId, sourceStream: stream }]
            : [],
        ),
    ),
  );
  const resumes = debited.map((d) => world.send(recovery, 'ResumeTransfer', d, AFTER_GRACE));
  const swept = Array.from({ length: r.users }, (_, u) => later('ReleaseOrphanSeat', u));
  const recovered = await s.waitFor(Promise.allSettled([...resumes, ...swept]), act);
  for (const o of recovered) assert.equal(o.status, 'fulfilled', o.status === 'rejected' ? String(o.reason) : '');
  for (const o of recovered.slice(resumes.length)) if (o.status === 'fulfilled' && (o.value as { released: boolean }).released) seen.sweptAfterGrace++;
  for (let u = 0; u < r.users; u++) await world.send(quiet, 'ReleaseOrphanSeat', { userId: userId(u), agentId: AGENT }, AFTER_GRACE);
  world.checkSeats();
  world.checkSettled();
  tally(world);
}

/** The paths a schedule reached, read from its log. */
function tally(world: World): void {
  const events = world.log.streamsOf('').flatMap(([, events]) => events);
  for (const e of events) {
    if (e.type === 'TransferRejected' && (e.data as { reason: string }).reason.includes('stopped following this pool while the follow'))
      seen.refollowRejectedAfterStop++;
    if (e.type === 'BetaSeatClaimAdded') seen.claimAddedToHeldSeat++;
    if (e.type === 'BetaSeatClaimReleased') seen.claimGivenBackSeatKept++;
    if (e.type === 'WalletRefunded') seen.replanned++;
  }
}

t.test('whatever interleaves, every open beta pool holds a seat, the seats never exceed maxBetaUsers, and a follow holds what it answers', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.scheduler(), run, (s, r) => play(s, r)),
    { numRuns: Number(process.env.SEAT_RUNS ?? 300), ...(process.env.SEAT_SEED ? { seed: Number(process.env.SEAT_SEED), path: process.env.SEAT_PATH } : {}) },
  );
  t.comment(JSON.stringify(seen));
  for (const [path, count] of Object.entries(seen)) t.ok(count > 0, `reached: ${path} (${count})`);
});
