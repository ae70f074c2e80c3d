// Read-your-writes moved to the reader (projections/wait.ts createDeferredWrites): a write whose
// answer needed no read model is remembered for its user, in this process and in Redis, and the
// user's next read waits for it, in any process; Redis down or slow never stalls a request.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import t from 'tap';
import { comparePositions, type Position } from '../../infra/eventstore/port.ts';
import { lockKey } from '../../projections/checkpoints.ts';
import { createDeferredWrites, type ProjectionsProgress } from '../../projections/wait.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const at = (commit: number): Position => ({ commit: BigInt(commit), prepare: BigInt(commit) });

/** A Redis client of its own key space, once connected (a client not yet ready is never asked). */
async function readyRedis(): Promise<Redis> {
  const redis = new Redis(REDIS_URL, { keyPrefix: `test-ryw-${randomUUID()}:` });
  if (redis.status !== 'ready') await new Promise((r) => redis.once('ready', r));
  return redis;
}

/** Projections of a process that keep up: nothing read waits, every write is applied. */
const keepingUp: ProjectionsProgress = { running: () => true, lagMs: () => 0, hasApplied: () => true };

/** A process's deferred writes on `redis`, with the positions its writes and reads waited for recorded. */
function processOn(redis: Pick<Redis, 'defineCommand' | 'get' | 'status'>, projections: ProjectionsProgress | null = keepingUp) {
  const settled: Array<Position | undefined> = [];
  const writes = createDeferredWrites({ redis, settle: async (p) => void settled.push(p), projections, boundMs: 30, ttlMs: 10_000 });
  return { writes, settled };
}

t.test("a deferred write is waited for by its user's next read, in this process and in another", async (t) => {
  const redis = await readyRedis();
  t.teardown(() => redis.quit());
  const a = processOn(redis);
  const b = processOn(redis);
  await a.writes.defer('user-1', at(7));
  await a.writes.beforeRead('user-1');
  await b.writes.beforeRead('user-1');
  t.same(a.settled, [at(7)], 'the writing process waits for it');
  t.same(b.settled, [at(7)], 'another process, through Redis, too');
  await b.writes.defer('user-1', at(5));
  await a.writes.beforeRead('user-1');
  t.same(a.settled.at(-1), at(7), 'an earlier position deferred later never replaces a later one');
  await a.writes.beforeRead('user-2');
  t.equal(a.settled.length, 2, 'a user with no deferred write waits for nothing');
  await a.writes.defer('user-1', undefined);
  t.equal(a.settled.length, 2, 'a command that touched no stream defers nothing');
});

t.test("a write waited for is the user's latest write in every process, and no read waits for it again", async (t) => {
  const redis = await readyRedis();
  t.teardown(() => redis.quit());
  const a = processOn(redis);
  const b = processOn(redis);
  t.same(await b.writes.beforeRead('user-3'), { latest: undefined, shared: true }, 'no write yet');
  await a.writes.defer('user-3', at(5));
  await a.writes.wrote('user-3', at(6));
  t.same(await b.writes.beforeRead('user-3'), { latest: at(6), shared: true }, 'another process knows the latest');
  t.same(b.settled, [], 'and waits for nothing (the later write was waited for)');
  await b.writes.defer('user-3', at(7));
  t.same(await a.writes.beforeRead('user-3'), { latest: at(7), shared: true }, 'a later deferred write replaces it');
  t.same(a.settled, [at(7)], 'and is waited for');
});

t.test("a write whose answer reads a read model waits for the user's earlier writes, learned from the same Redis call", async (t) => {
  const redis = await readyRedis();
  t.teardown(() => redis.quit());
  const a = processOn(redis);
  const b = processOn(redis);
  await a.writes.defer('user-1', at(7));
  await b.writes.defer('user-1', at(9), { withEarlier: true });
  t.same(b.settled, [at(7)], "another process's earlier write, answered by the call that stored this one");
  t.equal(await redis.get('ryw:user-1'), `${'9'.padStart(20, '0')}:${'9'.padStart(20, '0')}`, 'this write is the one remembered');
  await b.writes.defer('user-1', at(11), { withEarlier: true });
  t.same(b.settled.at(-1), at(9), 'its own earlier write too');
  await a.writes.defer('user-2', at(12), { withEarlier: true });
  t.equal(a.settled.length, 0, 'no earlier write: nothing waited for');
  await a.writes.defer('user-1', at(13));
  t.equal(a.settled.length, 0, 'a write without it waits for nothing');
  const behind = processOn(redis, { running: () => true, lagMs: () => 50, hasApplied: () => false });
  await behind.writes.defer('user-1', at(14), { withEarlier: true });
  t.same(behind.settled, [at(14), at(13)], 'projections behind: its own write and, read from Redis, the earlier one');
});

t.test('projections behind: the write waits for them before answering, so writers never outrun them', async (t) => {
  const redis = await readyRedis();
  t.teardown(() => redis.quit());
  let lag = 50;
  let applied = false;
  const projections: ProjectionsProgress = { running: () => true, lagMs: () => lag, hasApplied: () => applied };
  const p = processOn(redis, projections);
  await p.writes.defer('user-1', at(4));
  t.same(p.settled, [at(4)], 'events read and not applied for 50 ms: waited at once');
  t.match(await redis.get('ryw:user-1'), /:w$/, 'remembered as waited for (the latest write known)');
  t.same(await p.writes.beforeRead('user-1'), { latest: at(4), shared: true }, 'the read knows it');
  t.same(p.settled, [at(4)], 'and has nothing left to wait for');
  lag = 0;
  await p.writes.defer('user-1', at(6));
  t.same(p.settled, [at(4)], 'caught up: answered at once');
  await p.writes.beforeRead('user-1');
  t.same(p.settled, [at(4), at(6)], 'and the next read waits');
  await new Promise((r) => setTimeout(r, 40));
  await p.writes.defer('user-1', at(8));
  t.same(p.settled.at(-1), at(8), 'a write of ours unapplied for longer than the bound (not even read: a visibility hold) makes the next one wait');
  applied = true;
  await p.writes.defer('user-1', at(9));
  t.same(p.settled.at(-1), at(8), 'once applied, writes answer at once again');
  const stopped = processOn(redis, { ...projections, running: () => false });
  await stopped.writes.defer('user-2', at(10));
  t.same(stopped.settled, [at(10)], 'projections stopped: the write waits');
  const none = processOn(redis, null);
  await none.writes.defer('user-2', at(11));
  t.same(none.settled, [at(11)], 'no projections in this process: the write waits, as before');
});

t.test('Redis down or slow: the write waits as before, the read uses what this process knows', async (t) => {
  // the deferral's script is a command of the connection's (`keepLater`, defined on it)
  const hanging = {
    status: 'ready',
    defineCommand() {},
    keepLater: () => new Promise<never>(() => {}),
    get: () => new Promise<never>(() => {}),
  } as unknown as Redis;
  const failing = {
    status: 'ready',
    defineCommand() {},
    keepLater: () => Promise.reject(new Error('down')),
    get: () => Promise.reject(new Error('down')),
  } as unknown as Redis;
  const offline = {
    status: 'reconnecting',
    defineCommand() {},
    keepLater: () => t.fail('no call while offline'),
    get: () => t.fail('no call while offline'),
  } as unknown as Redis;
  for (const [name, redis] of [
    ['hanging (a mock: a Redis that never answers)', hanging],
    ['failing (a mock: a Redis that refuses)', failing],
    ['reconnecting (a mock: a client not ready, whose calls would queue)', offline],
  ] as const) {
    const p = processOn(redis);
    const started = Date.now();
    await p.writes.defer('user-1', at(3));
    t.same(p.settled, [at(3)], `${name}: the write waited for its read models`);
    await p.writes.beforeRead('user-1');
    // A write that waited is applied already; a read waiting for it again costs nothing.
    t.same(
      p.settled.slice(1).every((s) => comparePositions(s!, at(3)) === 0),
      true,
      `${name}: the read waits for nothing newer`,
    );
    t.ok(Date.now() - started < 1000, `${name}: bounded`);
  }
});

t.test("over HTTP: a withdrawal answers from its own state at once, and the user's next read waits until it shows", async (t) => {
  // Backpressure off (the bound is tested above): with projectors held, a loaded machine could put
  // the runner more than 25 ms behind while the withdrawal's own steps still run, and it would wait.
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test', READ_YOUR_WRITES_DEFER_LAG_MS: '60000' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  const user = await signIn(app, 'reader@example.test');
  const other = await signIn(app, 'other@example.test');
  const agentId = await followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, { name: 'Read after write' }, { live: true });
  const path = '/api/v1/users/me/subscriptions';
  t.equal((await api(app, 'POST', path, { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } })).status, 200);
  t.equal((await api(app, 'GET', path, { token: user.accessToken })).body.data[0].allocatedUsd, 100);

  // The projectors are held: the runner takes each one's advisory lock in its batch transaction.
  const holder = await app.deps.pool.connect();
  t.teardown(() => holder.release());
  await holder.query('BEGIN');
  await holder.query('SELECT pg_advisory_xact_lock($1)', [lockKey('subscriptions')]);
  const started = Date.now();
  const out = await api(app, 'POST', `${path}/${agentId}/allocation/withdraw`, { token: user.accessToken, body: { amountUsd: 1 } });
  t.equal(out.body.data.subscription.allocatedUsd, 99, "answered from the command's own state");
  t.ok(Date.now() - started < 2000, 'without waiting for the held projectors');
  let answered = false;
  const read = api(app, 'GET', path, { token: user.accessToken }).then((res) => {
    answered = true;
    return res;
  });
  await new Promise((r) => setTimeout(r, 300));
  t.notOk(answered, 'the next read of the same user waits for the withdrawal to be projected');
  t.equal((await api(app, 'GET', path, { token: other.accessToken })).status, 200, "another user's read does not wait");
  await holder.query('COMMIT');
  t.equal((await read).body.data[0].allocatedUsd, 99, 'once projected, the read shows it');
});
