import { randomUUID } from 'node:crypto';
import t from 'tap';
import { Queue, QueueEvents } from 'bullmq';
import { load, type CommandContext } from '../../commands/handle.ts';
import { subscribe, subscribeInput } from '../../commands/subscriptions/subscribe.ts';
import { agentFolder, agentStream } from '../../domain/agent/index.ts';
import { poolFolder, poolStream } from '../../domain/pool/state.ts';
import { balanceOf, walletFolder, walletStream } from '../../domain/wallet/state.ts';
import type { EventStore, RecordedEvent } from '../../infra/eventstore/port.ts';
import { bullConnection, queuePrefix } from '../../workers/index.ts';
import { RECOVERY_ACTOR, recoverTransfer, releaseSeat, TRANSFER_QUEUE } from '../../workers/transfers.ts';
import { rebuild } from '../../projections/rebuild.ts';
import { transfersProjector } from '../../projections/transfers/projector.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';

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

/**
 * The real store, except that the process "dies" at the first append `diesAt` picks: that append
 * and every later one fail, so the interrupted command runs none of its later steps or clean-ups.
 */
function dyingStore(store: EventStore, diesAt: (streamName: string) => boolean): EventStore {
  let dead = false;
  return {
    kind: store.kind,
    async append(streamName, events, options) {
      dead ||= diesAt(streamName);
      if (dead) throw new Error('the process died');
      return store.append(streamName, events, options);
    },
    readStream: (name, options) => store.readStream(name, options),
    readAll: (options) => store.readAll(options),
    subscribeAll: (options) => store.subscribeAll(options),
    ping: () => store.ping(),
    close: async () => undefined,
  };
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
    followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, {
      name: 'Breakout Hunter', venue: 'SPOT_VENUE', minAllocationUsd: 10, maxBetaUsers: 5, ...body,
    });
  const follow = (user: SignedIn, body: Record<string, unknown>) => api(app, 'POST', SUBSCRIPTIONS, { token: user.accessToken, body });
  /** The real follow command, on a store whose process dies at the append `diesAt` picks. */
  const interruptedFollow = async (user: SignedIn, body: Record<string, unknown>, diesAt: (stream: string) => boolean) => {
    const ctx: CommandContext = { correlationId: `crashed-${randomUUID()}`, actor: user.userId, now: new Date() };
    const deps = { store: dyingStore(store, diesAt), config: app.deps.config };
    const died = await subscribe(deps, user.userId, subscribeInput.parse(body), ctx).then(
      () => false,
      (err: unknown) => err instanceof Error && err.message === 'the process died',
    );
    if (!died) throw new Error('the follow was expected to die at the chosen append');
    return ctx;
  };
  const poolEvents = (user: SignedIn, agentId: string) => store.readStream(poolStream(`${user.userId}.${agentId}.virtual`));
  const seatHolders = async (agentId: string) => {
    const { state } = await load(store, agentStream(agentId), agentFolder);
    return state.exists ? state.betaSeats : [];
  };
  /** What the user owns in micro-USD: the virtual wallet plus every given pool, from the streams. */
  const holdings = async (user: SignedIn, agentIds: string[]) => {
    const wallet = (await load(store, walletStream(user.userId), walletFolder)).state;
    let total = balanceOf(wallet, 'virtual', START_MICRO);
    for (const agentId of agentIds) {
      const pool = (await load(store, poolStream(`${user.userId}.${agentId}.virtual`), poolFolder)).state;
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
      t.equal(await releaseSeat(app.deps, { agentId, userId: user.userId }), 0, 'a seat whose debit waits for its pool is not released');

      const events = await recovered(user, agentId);
      t.same(events.map((e) => e.type), ['AgentFollowed', 'AllocationAdded']);
      t.same(credits(events)[0]!.data, { transferId: `${poolId}#add-1`, amountMicro: 250_000_000, confirmed: true }, 'exactly the debited amount');
      t.match(events[0]!.data, { tradeMode: 'ALERTS_ONLY', isPaused: true, allocationAmountUsd: 250_000_000, terms: { agentName: 'Breakout Hunter' } });
      t.same(byRecovery(events).length, 2, 'appended by the recovery');
      t.ok(events.every((e) => e.metadata.correlationId === crashed.correlationId), 'correlated with the interrupted request');
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
      const ctx: CommandContext = { correlationId: `flaky-${randomUUID()}`, actor: user.userId, now: new Date() };
      const body = subscribeInput.parse({ agentId, walletContext: 'virtual', allocationAmountUsd: 120 });
      await t.rejects(subscribe({ store: flaky, config: app.deps.config }, user.userId, body, ctx), { message: 'the pool append failed' });
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
      const job = { userId: user.userId, transferId };
      const direct = await Promise.all([recoverTransfer(app.deps, job), recoverTransfer(app.deps, job), recoverTransfer(app.deps, job)]);
      t.same([...direct].sort(), [0, 0, 2], 'one run opens the pool and credits it; the others find it done');
      const jobId = `complete-${transferId}`;
      await queue.add('complete-transfer', job, { jobId, removeOnComplete: false });
      await queue.add('complete-transfer', job, { jobId, removeOnComplete: false });
      const finished = await eventually('the queued job', async () => {
        const queued = await queue.getJob(jobId);
        return queued?.finishedOn ? queued : undefined;
      });
      t.equal(finished.returnvalue, 0, 'the queued job appends nothing');
      t.equal(finished.attemptsMade, 1, 'the duplicate add was the same job');

      await sleep(GRACE_MS + 1000);
      const events = await poolEvents(user, agentId);
      t.same(events.map((e) => e.type), ['AgentFollowed', 'AllocationAdded'], 'after the sweeps too: one credit');
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
        recoverTransfer(app.deps, { userId: user.userId, transferId: `${user.userId}.${agentId}.virtual#add-1` }),
      ]);
      t.equal(retried.status, 200);
      t.equal(retried.body.data.subscription.allocatedUsd, 300, 'the answer shows the pool even when the recovery made it');
      const events = await poolEvents(user, agentId);
      t.equal(credits(events).length, 1);
      t.equal(await holdings(user, [agentId]), START_MICRO);
      t.equal(balanceOf((await load(store, walletStream(user.userId), walletFolder)).state, 'virtual', START_MICRO), START_MICRO - 300_000_000);
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
      t.same(events.map((e) => e.type), ['AgentFollowed', 'AllocationAdded', 'AllocationAdded'], 'no settings change');
      t.same(byRecovery(events).map((e) => e.data), [{ transferId: `${user.userId}.${agentId}.virtual#add-2`, amountMicro: 200_000_000, confirmed: true }]);
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
      const agentEvents = await store.readStream(agentStream(agentId));
      const released = agentEvents.at(-1)!;
      t.match(released, { type: 'BetaSeatReleased', data: { userId: crashedUser.userId }, metadata: { actor: RECOVERY_ACTOR } });
      t.same(await store.readStream(walletStream(crashedUser.userId)), [], 'no money moved');
      t.same(await poolEvents(crashedUser, agentId), []);
      await app.deps.readYourWrites(released.position);
      t.equal((await api(app, 'GET', `/api/v1/agents/${agentId}`)).body.data.performanceStats.betaSeatsTaken, 0);
      t.equal((await follow(other, { agentId, allocationAmountUsd: 50 })).status, 200, 'someone else can take the seat now');
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

      t.ok(queuedJobIds.some((id) => id.includes(crashedAgent)), 'the sweeper queued the interrupted follow');
      for (const agentId of [funded, empty]) {
        t.same(queuedJobIds.filter((id) => id.includes(agentId)), [], 'nor even queued a job for a normal follow');
        t.same(byRecovery(await poolEvents(user, agentId)), [], 'no recovery event in a normal pool');
        t.same(await seatHolders(agentId), [user.userId], 'the seat stays');
        const agentEvents = await store.readStream(agentStream(agentId));
        t.notOk(agentEvents.some((e) => e.type === 'BetaSeatReleased'));
      }
      t.same(credits(await poolEvents(user, funded)).map((e) => e.data.amountMicro), [700_000_000, 200_000_000]);
      t.equal(await holdings(user, [funded, empty, crashedAgent]), START_MICRO, '10000 USD across the wallet and three pools');
    });

    t.test('a debit recorded without its follow opens the pool with the agent terms and a first follow defaults', async (t) => {
      const user = await newUser();
      const agentId = await betaAgent({ name: 'Legacy Bot' });
      const poolId = `${user.userId}.${agentId}.virtual`;
      const meta = { correlationId: 'old-request', actor: user.userId, occurredAt: new Date().toISOString() };
      await store.append(
        walletStream(user.userId),
        [
          { type: 'WalletOpened', data: { virtualStartMicro: START_MICRO, openedAt: meta.occurredAt }, metadata: meta },
          { type: 'VirtualFundsAllocated', data: { transferId: `${poolId}#add-1`, poolId, walletContext: 'virtual', amountMicro: 75_000_000 }, metadata: meta },
        ],
        { expectedRevision: 'no_stream' },
      );
      const events = await recovered(user, agentId);
      t.match(events[0]!.data, { tradeMode: 'AUTO_TRADING', isPaused: false, allocationMode: 'USD_AMOUNT', allocationAmountUsd: 75_000_000, terms: { agentName: 'Legacy Bot' } });
      t.equal(credits(events)[0]!.data.amountMicro, 75_000_000);
      t.equal(await holdings(user, [agentId]), START_MICRO);
    });
  });

  await t.test('a rebuilt transfers read model equals the live one', async (t) => {
    let last: RecordedEvent | undefined;
    for (let batch = await store.readAll({ maxCount: 1000 }); batch.length; batch = await store.readAll({ fromPosition: last!.position, maxCount: 1000 })) {
      last = batch.at(-1);
    }
    await app.deps.readYourWrites(last!.position);
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
