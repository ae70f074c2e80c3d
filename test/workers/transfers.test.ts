import t from 'tap';
import { Queue, QueueEvents } from 'bullmq';
import { createDispatcher } from '../../commands/dispatch.ts';
import { subscribeInput } from '../../commands/subscriptions/subscribe-input.ts';
import { seatShardDecider, seatShardId, SEAT_SHARDS } from '../../domain/agent/index.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolStream } from '../../domain/pool/state.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { walletDebitedSchema } from '../../domain/wallet/events.ts';
import { balanceOf, walletStream } from '../../domain/wallet/state.ts';
import type { EventStore, RecordedEvent } from '../../infra/eventstore/port.ts';
import { bullConnection, queuePrefix } from '../../workers/index.ts';
import { RECOVERY_ACTOR, releaseSeat, resumeTransfer, TRANSFER_QUEUE, type RecoveryDeps } from '../../workers/transfers.ts';
import { rebuild } from '../../projections/rebuild.ts';
import { transfersInFlight, unfollowedSeats } from '../../projections/transfers/queries.ts';
import { transfersProjector } from '../../projections/transfers/projector.ts';
import { api, loadState, startTestApp } from '../support/app.ts';
import { DIED, dyingStore, interruptedFollow as crashFollow } from '../support/crash.ts';
import { followableAgent, seatHolders as holders } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { committedTail } from '../support/log.ts';

const START_MICRO = 10_000_000_000; // VIRTUAL_START_USD 10000
const GRACE_MS = 2000;
const SUBSCRIPTIONS = '/api/v1/users/me/subscriptions';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` answers something truthy (the sweeper runs on its own schedule). */
async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

t.test('transfer recovery completes follows interrupted by a crash', async (t) => {
  const app = await startTestApp({
    config: { ADMIN_EMAILS: 'admin@example.test', TRANSFER_RECOVERY_INTERVAL_MS: '250', TRANSFER_RECOVERY_GRACE_MS: String(GRACE_MS) },
  });
  const connection = bullConnection(app.deps.config.REDIS_URL);
  const queue = new Queue(TRANSFER_QUEUE, { connection, prefix: queuePrefix(app.runtime.keyPrefix) });
  const queueEvents = new QueueEvents(TRANSFER_QUEUE, { connection: { url: app.deps.config.REDIS_URL }, prefix: queuePrefix(app.runtime.keyPrefix) });
  const queuedJobIds: string[] = [];
  queueEvents.on('added', ({ jobId }) => void queuedJobIds.push(jobId));
  await queueEvents.waitUntilReady();
  t.teardown(async () => {
    await queueEvents.close();
    await queue.close();
    connection.disconnect();
    await app.close();
  });
  const { store } = app.deps;
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  let users = 0;
  const newUser = () => signIn(app, `follower${++users}@example.test`);

  const betaAgent = (body: Record<string, unknown> = {}) =>
    followableAgent(
      app,
      { developer: dev.accessToken, admin: admin.accessToken },
      {
        name: 'Breakout Hunter',
        venue: 'SPOT_VENUE',
        minAllocationUsd: 10,
        maxBetaUsers: 5,
        ...body,
      },
    );
  const follow = (user: SignedIn, body: Record<string, unknown>) => api(app, 'POST', SUBSCRIPTIONS, { token: user.accessToken, body });
  /** The real follow command, on a store whose process dies at the append `diesAt` picks. */
  const interruptedFollow = (user: SignedIn, body: Record<string, unknown> & { agentId: string }, diesAt: (stream: string) => boolean) =>
    crashFollow(app, user.userId, body, diesAt);
  const recovery: RecoveryDeps = {
    dispatch: app.deps.dispatch,
    clock: app.deps.clock,
    config: app.deps.config,
    queries: { transfersInFlight: (b, l) => transfersInFlight(app.deps.pool, b, l), unfollowedSeats: (b, l) => unfollowedSeats(app.deps.pool, b, l) },
  };
  /** The resume job of the transfer `transferId` of the user's wallet, as the sweep would queue it. */
  const resumeJob = async (user: SignedIn, transferId: string) => {
    const debit = (await store.readStream(walletStream(user.userId))).find(
      (e) => e.type === 'WalletDebited' && walletDebitedSchema.parse(e.data).transfer.transferId === transferId,
    )!;
    return { transferId, sourceStream: walletStream(user.userId), correlationId: debit.metadata.correlationId, debitEventId: debit.id };
  };
  const poolEvents = (user: SignedIn, agentId: string) => store.readStream(poolStream(`${user.userId}.${agentId}.virtual`));
  const seatHolders = (agentId: string) => holders(app, agentId);
  /** Every seat event of the agent, across its shard streams, in global order. */
  const seatEvents = async (agentId: string) => {
    const shards = await Promise.all(Array.from({ length: SEAT_SHARDS }, (_, k) => store.readStream(seatShardDecider.streamOf(seatShardId(agentId, k)))));
    return shards
      .flat()
      .sort((a, b) =>
        a.position.commit === b.position.commit ? Number(a.position.prepare - b.position.prepare) : a.position.commit < b.position.commit ? -1 : 1,
      );
  };
  /** What the user owns in micro-USD: the virtual wallet plus every given pool, from the streams. */
  const holdings = async (user: SignedIn, agentIds: string[]) => {
    const wallet = (await loadState(app, walletDecider, user.userId)).state;
    let total = balanceOf(wallet, 'virtual', START_MICRO);
    for (const agentId of agentIds) {
      const pool = (await loadState(app, poolDecider, `${user.userId}.${agentId}.virtual`)).state;
      total += pool.followed ? pool.ledger.confirmedIn : 0;
    }
    return total;
  };
  const recovered = (user: SignedIn, agentId: string) =>
    eventually('the pool credit', async () => {
      const events = await poolEvents(user, agentId);
      return events.some((e) => e.type === 'AllocationAdded') && events;
    });
  const byRecovery = (events: RecordedEvent[]) => events.filter((e) => e.metadata.actor === RECOVERY_ACTOR);
  const credits = (events: RecordedEvent[]) =>
    events.filter((e) => e.type === 'AllocationAdded') as Array<RecordedEvent<'AllocationAdded', { transferId: string; amountMicro: number }>>;
  const subscriptionsOf = async (user: SignedIn, last: RecordedEvent) => {
    await app.deps.readYourWrites(last.position);
    return (await api(app, 'GET', SUBSCRIPTIONS, { token: user.accessToken })).body.data as any[];
  };

  await t.test('interrupted follows', async (t) => {
    // The scenarios use their own users and agents, so they run side by side.
    t.jobs = 8;
    t.test('a first follow that died after the wallet debit is completed with its own settings, and keeps its seat', async (t) => {
      const user = await newUser();
      const agentId = await betaAgent();
      const poolId = `${user.userId}.${agentId}.virtual`;
      const body = { agentId, walletContext: 'virtual', allocationAmountUsd: 250, tradeMode: 'ALERTS_ONLY', isPaused: true };
      const crashed = await interruptedFollow(user, body, (s) => s.startsWith('pool-'));
      t.equal(await holdings(user, [agentId]), START_MICRO - 250_000_000, 'the crash left 250 USD in neither the wallet nor a pool');
      t.same(await poolEvents(user, agentId), [], 'no pool yet');
      t.same(await seatHolders(agentId), [user.userId], 'the seat is taken');
      t.equal(await releaseSeat(recovery, { agentId, userId: user.userId }), false, 'a seat whose debit waits for its pool is not released');

      const events = await recovered(user, agentId);
      t.same(
        events.map((e) => e.type),
        ['AgentFollowed', 'AllocationAdded'],
      );
      t.match(credits(events)[0]!.data, { transferId: `${poolId}#add-1`, amountMicro: 250_000_000, confirmed: true, at: String }, 'exactly the debited amount');
      t.match(events[0]!.data, { tradeMode: 'ALERTS_ONLY', isPaused: true, allocationAmountUsd: 250_000_000, terms: { agentName: 'Breakout Hunter' } });
      t.same(byRecovery(events).length, 2, 'appended by the recovery');
      t.ok(
        events.every((e) => e.metadata.correlationId === crashed.correlationId),
        'correlated with the interrupted request',
      );
      t.equal(await holdings(user, [agentId]), START_MICRO, 'wallet and pool hold the 10000 USD again');

      const [row] = await subscriptionsOf(user, events[1]!);
      t.match(row, { agent: agentId, allocatedUsd: 250, tradeMode: 'ALERTS_ONLY', isPaused: true, walletContext: 'virtual' });

      await sleep(GRACE_MS + 1000);
      t.same(await seatHolders(agentId), [user.userId], 'the follower keeps the seat once the pool exists');
      t.equal(credits(await poolEvents(user, agentId)).length, 1, 'later sweeps credit nothing more');
    });

    t.test('a follow whose pool append fails after the debit keeps its seat for the pool the recovery opens', async (t) => {
      const user = await newUser();
      const agentId = await betaAgent();
      // The process lives on: only its pool append fails, once, so the command's own clean-up runs.
      let failed = false;
      const flaky: EventStore = {
        ...store,
        async append(streamName, events, options) {
          if (!failed && streamName.startsWith('pool-')) {
            failed = true;
            throw new Error('the pool append failed');
          }
          return store.append(streamName, events, options);
        },
      };
      const dispatch = createDispatcher({
        store: flaky,
        redis: app.deps.redis,
        mailer: { send: async () => {} },
        ids: app.deps.ids,
        swaps: app.deps.swaps,
        config: app.deps.config,
      });
      const metadata = { now: new Date(), actor: user.userId, correlationId: 'flaky-request' };
      const input = subscribeInput.parse({ agentId, walletContext: 'virtual', allocationAmountUsd: 120 });
      await t.rejects(dispatch({ type: 'FollowAgent', data: { userId: user.userId, input }, metadata }), { message: 'the pool append failed' });
      t.same(await seatHolders(agentId), [user.userId], 'the seat is not given back after the debit');
      const events = await recovered(user, agentId);
      t.equal(credits(events).length, 1, 'the recovery opens and credits the pool');
      await sleep(GRACE_MS + 1000);
      t.same(await seatHolders(agentId), [user.userId], 'the seat stays with the recovered pool');
    });

    t.test('recovery jobs run twice and concurrently credit once', async (t) => {
      const user = await newUser();
      const agentId = await betaAgent();
      const transferId = `${user.userId}.${agentId}.virtual#add-1`;
      await interruptedFollow(user, { agentId, walletContext: 'virtual', allocationAmountUsd: 400 }, (s) => s.startsWith('pool-'));
      // Within the grace period the sweeper leaves it alone: these runs race each other.
      const job = await resumeJob(user, transferId);
      const direct = await Promise.all([resumeTransfer(recovery, job), resumeTransfer(recovery, job), resumeTransfer(recovery, job)]);
      t.same(direct, ['completed', 'completed', 'completed'], 'every run finds the transfer completed');
      t.same(
        (await poolEvents(user, agentId)).map((e) => e.type),
        ['AgentFollowed', 'AllocationAdded'],
        'one run opened the pool and credited it',
      );
      const jobId = `resume-${transferId}`;
      await queue.add('resume-transfer', job, { jobId, removeOnComplete: false });
      await queue.add('resume-transfer', job, { jobId, removeOnComplete: false });
      const finished = await eventually('the queued job', async () => {
        const queued = await queue.getJob(jobId);
        return queued?.finishedOn ? queued : undefined;
      });
      t.equal(finished.returnvalue, 'completed', 'the queued job finds it completed and appends nothing');
      t.equal(finished.attemptsMade, 1, 'the duplicate add was the same job');

      await sleep(GRACE_MS + 1000);
      const events = await poolEvents(user, agentId);
      t.same(
        events.map((e) => e.type),
        ['AgentFollowed', 'AllocationAdded'],
        'after the sweeps too: one credit',
      );
      t.equal(credits(events)[0]!.data.amountMicro, 400_000_000);
      t.equal(await holdings(user, [agentId]), START_MICRO);
    });

    t.test('the user retrying while the recovery runs: the debit is credited once, never debited twice', async (t) => {
      const user = await newUser();
      const agentId = await betaAgent();
      const body = { agentId, walletContext: 'virtual', allocationAmountUsd: 300 };
      await interruptedFollow(user, body, (s) => s.startsWith('pool-'));
      const [retried] = await Promise.all([
        follow(user, body),
        resumeJob(user, `${user.userId}.${agentId}.virtual#add-1`).then((job) => resumeTransfer(recovery, job)),
      ]);
      t.equal(retried.status, 200);
      t.equal(retried.body.data.subscription.allocatedUsd, 300, 'the answer shows the pool even when the recovery made it');
      const events = await poolEvents(user, agentId);
      t.equal(credits(events).length, 1);
      t.equal(await holdings(user, [agentId]), START_MICRO);
      t.equal(balanceOf((await loadState(app, walletDecider, user.userId)).state, 'virtual', START_MICRO), START_MICRO - 300_000_000);
    });

    t.test('a top-up that died after the debit is credited to the existing pool, whose settings stay', async (t) => {
      const user = await newUser();
      const agentId = await betaAgent();
      t.equal((await follow(user, { agentId, walletContext: 'virtual', allocationAmountUsd: 100 })).status, 200);
      await interruptedFollow(user, { agentId, walletContext: 'virtual', allocationAmountUsd: 300, isPaused: true }, (s) => s.startsWith('pool-'));
      t.equal(await holdings(user, [agentId]), START_MICRO - 200_000_000);

      const events = await eventually('the second credit', async () => {
        const all = await poolEvents(user, agentId);
        return credits(all).length === 2 && all;
      });
      t.same(
        events.map((e) => e.type),
        ['AgentFollowed', 'AllocationAdded', 'AllocationAdded'],
        'no settings change',
      );
      t.match(
        byRecovery(events).map((e) => e.data),
        [{ transferId: `${user.userId}.${agentId}.virtual#add-2`, amountMicro: 200_000_000, confirmed: true, at: String }],
      );
      t.equal(byRecovery(events).length, 1);
      t.equal(await holdings(user, [agentId]), START_MICRO);
      const [row] = await subscriptionsOf(user, events[2]!);
      t.match(row, { allocatedUsd: 300, isPaused: false, allocationAmountUsd: 100 });
    });

    t.test('a seat taken by a follow that died before any pool is released, and the full beta opens again', async (t) => {
      const agentId = await betaAgent({ maxBetaUsers: 1 });
      const crashedUser = await newUser();
      await interruptedFollow(crashedUser, { agentId, walletContext: 'virtual', allocationAmountUsd: 50 }, (s) => s.startsWith('wallet-'));
      t.same(await seatHolders(agentId), [crashedUser.userId]);
      const other = await newUser();
      t.equal((await follow(other, { agentId, allocationAmountUsd: 50 })).status, 409, 'the orphan seat fills the beta');

      await eventually('the seat release', async () => (await seatHolders(agentId)).length === 0);
      const released = (await seatEvents(agentId)).at(-1)!;
      t.match(released, { type: 'BetaSeatReleased', data: { userId: crashedUser.userId }, metadata: { actor: RECOVERY_ACTOR } });
      t.same(await store.readStream(walletStream(crashedUser.userId)), [], 'no money moved');
      t.same(await poolEvents(crashedUser, agentId), []);
      await app.deps.readYourWrites(released.position);
      t.equal((await api(app, 'GET', `/api/v1/agents/${agentId}`)).body.data.performanceStats.betaSeatsTaken, 0);
      t.equal((await follow(other, { agentId, allocationAmountUsd: 50 })).status, 200, 'someone else can take the seat now');
    });

    t.test('a stop that died after closing its pool, before giving its seat claim back: the sweep frees the seat', async (t) => {
      const agentId = await betaAgent({ maxBetaUsers: 1 });
      const user = await newUser();
      t.equal((await follow(user, { agentId, allocationAmountUsd: 50 })).status, 200);
      const { deps } = app;
      const dying = createDispatcher({
        store: dyingStore(deps.store, (s) => s.startsWith('betaseats-')),
        redis: deps.redis,
        mailer: { send: async () => {} },
        ids: deps.ids,
        swaps: deps.swaps,
        config: deps.config,
      });
      const metadata = { now: deps.clock.now(), actor: user.userId, correlationId: `stop-died-${deps.ids.uuid()}` };
      await t.rejects(dying({ type: 'StopFollowing', data: { userId: user.userId, agentId, walletContext: 'virtual' }, metadata }), { message: DIED });
      t.notOk((await loadState(app, poolDecider, `${user.userId}.${agentId}.virtual`)).state.followed, 'the pool is stopped');
      t.same(await seatHolders(agentId), [user.userId], 'its claim still holds the seat');
      const other = await newUser();
      t.equal((await follow(other, { agentId, allocationAmountUsd: 50 })).status, 409, 'the orphan seat fills the beta');
      await eventually('the seat release', async () => (await seatHolders(agentId)).length === 0);
      t.match((await seatEvents(agentId)).at(-1), { type: 'BetaSeatReleased', data: { userId: user.userId }, metadata: { actor: RECOVERY_ACTOR } });
      t.equal((await follow(other, { agentId, allocationAmountUsd: 50 })).status, 200, 'someone else can take the seat now');
      t.equal(await holdings(user, [agentId]), START_MICRO, 'the stop paid everything back');
    });

    t.test('a seat of a follow without capital that died before its pool is released too', async (t) => {
      const agentId = await betaAgent({ minAllocationUsd: 0 });
      const user = await newUser();
      await interruptedFollow(user, { agentId, walletContext: 'virtual' }, (s) => s.startsWith('pool-'));
      t.same(await seatHolders(agentId), [user.userId]);
      await eventually('the seat release', async () => (await seatHolders(agentId)).length === 0);
      t.same(await store.readStream(walletStream(user.userId)), []);
    });

    t.test('normal follows are never touched by the sweeper, while an interrupted one next to them is', async (t) => {
      const user = await newUser();
      const [funded, empty, crashedAgent] = await Promise.all([betaAgent(), betaAgent({ minAllocationUsd: 0 }), betaAgent()]);
      t.equal((await follow(user, { agentId: funded, allocationAmountUsd: 700 })).status, 200);
      t.equal((await follow(user, { agentId: empty })).status, 200);
      t.equal((await follow(user, { agentId: funded, allocationAmountUsd: 900 })).status, 200, 'a top-up');
      await interruptedFollow(user, { agentId: crashedAgent, walletContext: 'virtual', allocationAmountUsd: 100 }, (s) => s.startsWith('pool-'));
      await recovered(user, crashedAgent);
      await sleep(GRACE_MS);

      t.ok(
        queuedJobIds.some((id) => id.includes(crashedAgent)),
        'the sweeper queued the interrupted follow',
      );
      for (const agentId of [funded, empty]) {
        t.same(
          queuedJobIds.filter((id) => id.includes(agentId)),
          [],
          'nor even queued a job for a normal follow',
        );
        t.same(byRecovery(await poolEvents(user, agentId)), [], 'no recovery event in a normal pool');
        t.same(await seatHolders(agentId), [user.userId], 'the seat stays');
        t.notOk((await seatEvents(agentId)).some((e) => e.type === 'BetaSeatReleased'));
      }
      t.same(
        credits(await poolEvents(user, funded)).map((e) => e.data.amountMicro),
        [700_000_000, 200_000_000],
      );
      t.equal(await holdings(user, [funded, empty, crashedAgent]), START_MICRO, '10000 USD across the wallet and three pools');
    });

    t.test('a transfer its pool cannot take is rejected by the pool and given back to the wallet', async (t) => {
      const user = await newUser();
      const agentId = await betaAgent({ name: 'Closed Bot' });
      const poolId = `${user.userId}.${agentId}.virtual`;
      const transferId = `${poolId}#add-1`;
      // A debit whose plan carries no follow, for a pool that is not open: the pool can only refuse it.
      const meta = { correlationId: 'add-to-a-closed-pool', actor: user.userId, occurredAt: new Date().toISOString() };
      const transfer = {
        transferId,
        amountMicro: 75_000_000,
        from: { kind: 'wallet', userId: user.userId, walletContext: 'virtual' },
        to: { kind: 'pool', userId: user.userId, agentId, walletContext: 'virtual' },
      };
      await store.append(
        walletStream(user.userId),
        [
          { type: 'WalletOpened', data: { virtualStartMicro: START_MICRO, openedAt: meta.occurredAt }, metadata: meta },
          { type: 'WalletDebited', data: { transfer }, metadata: meta },
        ],
        { expectedRevision: 'no_stream' },
      );
      const refunded = await eventually('the refund', async () => {
        const events = await store.readStream(walletStream(user.userId));
        return events.some((e) => e.type === 'WalletRefunded') && events;
      });
      t.match(refunded.at(-1), {
        type: 'WalletRefunded',
        data: { transferId, amountMicro: 75_000_000 },
        metadata: { actor: RECOVERY_ACTOR, correlationId: meta.correlationId },
      });
      t.same(
        (await poolEvents(user, agentId)).map((e) => e.type),
        ['TransferRejected'],
        'the pool recorded its refusal, and opened nothing',
      );
      t.equal(await holdings(user, [agentId]), START_MICRO, 'the money is back');
      const job = await resumeJob(user, transferId);
      t.equal(await resumeTransfer(recovery, job), 'compensated', 'resumed again: nothing more happens');
    });
  });

  await t.test('a rebuilt transfers read model equals the live one', async (t) => {
    t.ok(await app.deps.readYourWrites(await committedTail(app)), 'the read models applied every event');
    const snapshot = async () => ({
      transfers: (await app.deps.pool.query('SELECT * FROM transfers ORDER BY transfer_id')).rows,
      seats: (await app.deps.pool.query('SELECT * FROM beta_seat_holders ORDER BY agent_id, user_id')).rows,
    });
    const live = await snapshot();
    t.ok(live.transfers.length >= 8 && live.seats.length >= 5, `rows to compare: ${live.transfers.length} transfers, ${live.seats.length} seat holders`);
    await rebuild(store, app.deps.pool, transfersProjector);
    t.same(await snapshot(), live);
  });
});
