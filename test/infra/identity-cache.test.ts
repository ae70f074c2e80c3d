// The per-process memory of JWT sessions' identities (infra/identity-cache.ts) against a real Redis:
// an entry is used without loading again, a change drops it here at once and in another process's
// cache by pub/sub, an entry is used no longer than its TTL, a load that a change overtook is not
// remembered, and a refusal (null) is never remembered.
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { createIdentityCache, type IdentityCache, MAX_WEIGHT } from '../../infra/identity-cache.ts';
import { createRedis } from '../../infra/redis.ts';
import { until } from '../support/until.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Who {
  tier: string;
}

async function twoProcesses(t: Test, ttlMs = 2_000) {
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const made: Array<{ cache: IdentityCache<Who>; redis: ReturnType<typeof createRedis> }> = [];
  for (let i = 0; i < 2; i++) {
    const redis = createRedis(REDIS_URL, prefix);
    const cache = createIdentityCache<Who>({ redis, ttlMs, onerror: (err) => t.fail(String(err)) });
    made.push({ cache, redis });
  }
  t.teardown(() => {
    for (const { cache, redis } of made) {
      cache.close();
      redis.disconnect();
    }
  });
  // Both subscribed before the test starts (a cache whose subscriber is not ready loads every time).
  for (const { cache } of made) {
    await until('the subscriber ready', async () => {
      let loads = 0;
      const load = async () => {
        loads++;
        return { tier: 'probe' };
      };
      await cache.get('probe', 'probe', load);
      await cache.get('probe', 'probe', load);
      return loads === 1;
    });
  }
  return made.map((m) => m.cache) as [IdentityCache<Who>, IdentityCache<Who>];
}

/** A loader that counts its calls and answers the current `tier` (null: the session ended). */
function source(tier: string | null) {
  const s = {
    tier,
    loads: 0,
    load: async (): Promise<Who | null> => {
      s.loads++;
      return s.tier === null ? null : { tier: s.tier };
    },
  };
  return s;
}

t.test('an entry is used without loading again; a change drops it here at once and in the other process by pub/sub', async (t) => {
  const [here, there] = await twoProcesses(t);
  const row = source('free');
  t.same(await here.get('u1', 's1', row.load), { tier: 'free' });
  t.same(await there.get('u1', 's1', row.load), { tier: 'free' });
  t.same(await here.get('u1', 's1', row.load), { tier: 'free' });
  t.same(await there.get('u1', 's1', row.load), { tier: 'free' });
  t.equal(row.loads, 2, 'one load per process');
  row.tier = 'premium';
  here.changed(['u1']);
  t.same(await here.get('u1', 's1', row.load), { tier: 'premium' }, 'the process that applied the change: at once');
  const started = performance.now();
  await until('the other process dropped its entry', async () => (await there.get('u1', 's1', row.load))?.tier === 'premium', 1_000);
  t.ok(performance.now() - started < 1_000, 'by the notice, well before the TTL');
  row.tier = null;
  there.changed(['u1', 'u1']);
  t.equal(await there.get('u1', 's1', row.load), null, 'a session ended: refused at once where it was applied');
  await until('refused in the other process', async () => (await here.get('u1', 's1', row.load)) === null, 1_000);
  const loads = row.loads;
  t.equal(await here.get('u1', 's1', row.load), null);
  t.equal(row.loads, loads + 1, 'a refusal is not remembered');
});

t.test("a change of one user leaves the others' entries", async (t) => {
  const [here] = await twoProcesses(t);
  const a = source('free');
  const b = source('free');
  await here.get('ua', 's', a.load);
  await here.get('ub', 's', b.load);
  here.changed(['ua']);
  await here.get('ua', 's', a.load);
  await here.get('ub', 's', b.load);
  t.equal(a.loads, 2);
  t.equal(b.loads, 1);
});

t.test('an entry is used no longer than its TTL, with no notice at all', async (t) => {
  const [here] = await twoProcesses(t, 300);
  const row = source('free');
  await here.get('u2', 's2', row.load);
  row.tier = 'standard';
  t.same(await here.get('u2', 's2', row.load), { tier: 'free' }, 'within the TTL');
  await new Promise((r) => setTimeout(r, 350));
  t.same(await here.get('u2', 's2', row.load), { tier: 'standard' }, 'after it');
});

t.test('a load a change overtook is answered but not remembered (it may have read the old rows)', async (t) => {
  const [here] = await twoProcesses(t);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slow = here.get('u3', 's3', async () => {
    await gate;
    return { tier: 'free' };
  });
  here.changed(['u3']);
  release();
  t.same(await slow, { tier: 'free' });
  const row = source('premium');
  t.same(await here.get('u3', 's3', row.load), { tier: 'premium' });
  t.equal(row.loads, 1);
});

t.test('a change of another user does not stop a load in flight from being remembered', async (t) => {
  const [here] = await twoProcesses(t);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slow = here.get('u4', 's4', async () => {
    await gate;
    return { tier: 'free' };
  });
  here.changed(['someone-else']);
  release();
  t.same(await slow, { tier: 'free' });
  const row = source('premium');
  t.same(await here.get('u4', 's4', row.load), { tier: 'free' }, 'remembered: the change was not of this user');
  t.equal(row.loads, 0);
});

t.test('TTL 0: every get loads', async (t) => {
  const redis = createRedis(REDIS_URL, `test:${randomBytes(6).toString('hex')}:`);
  const cache = createIdentityCache<Who>({ redis, ttlMs: 0, onerror: (err) => t.fail(String(err)) });
  t.teardown(() => {
    cache.close();
    redis.disconnect();
  });
  const row = source('free');
  await cache.get('u4', 's4', row.load);
  await cache.get('u4', 's4', row.load);
  t.equal(row.loads, 2);
});

t.test('an entry found by its key alone is dropped by a change of any group its value names, here and in the other process', async (t) => {
  const [here, there] = await twoProcesses(t);
  const row = source('free');
  const groups = () => ['owner-1', 'apikey-k1'];
  for (const cache of [here, there, here, there]) t.same(await cache.lookup('apikey:h1', row.load, groups), { tier: 'free' });
  t.equal(row.loads, 2, 'one load per process');
  row.tier = 'premium';
  here.changed(['apikey-k1']);
  t.same(await here.lookup('apikey:h1', row.load, groups), { tier: 'premium' }, 'the key: at once here');
  await until('the other process dropped its entry', async () => (await there.lookup('apikey:h1', row.load, groups))?.tier === 'premium', 1_000);
  row.tier = 'standard';
  there.changed(['owner-1']);
  t.same(await there.lookup('apikey:h1', row.load, groups), { tier: 'standard' }, 'the owner: at once there');
  await until('dropped here', async () => (await here.lookup('apikey:h1', row.load, groups))?.tier === 'standard', 1_000);
});

t.test('a lookup a change of a group overtook is not remembered, though the group was known only once loaded', async (t) => {
  const [here] = await twoProcesses(t);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slow = here.lookup(
    'apikey:h2',
    async () => {
      await gate;
      return { tier: 'free' };
    },
    () => ['owner-2'],
  );
  here.changed(['owner-2']);
  release();
  t.same(await slow, { tier: 'free' });
  const row = source('premium');
  t.same(await here.lookup('apikey:h2', row.load, () => ['owner-2']), { tier: 'premium' });
  t.equal(row.loads, 1);
});

t.test('what is remembered weighs at most MAX_WEIGHT: the entries remembered first go, the newest stays', async (t) => {
  const [here] = await twoProcesses(t);
  const heavy = MAX_WEIGHT / 4;
  const rows = [0, 1, 2, 3, 4].map((i) => source(`list-${i}`));
  const remembered = async (i: number) => {
    const before = rows[i]!.loads;
    await here.lookup(
      `list:${i}`,
      rows[i]!.load,
      () => [`owner-${i}`],
      undefined,
      () => heavy,
    );
    return rows[i]!.loads === before;
  };
  for (let i = 0; i < 4; i++) t.notOk(await remembered(i), `list ${i} loaded`);
  for (let i = 0; i < 4; i++) t.ok(await remembered(i), `four weigh MAX_WEIGHT: list ${i} still remembered`);
  t.notOk(await remembered(4), 'a fifth is loaded');
  t.ok(await remembered(4), 'and remembered');
  t.notOk(await remembered(0), 'the one remembered first went to make room');
  t.ok(await remembered(3), 'a later one stays');
  // a value heavier than the whole bound is still kept, alone: the newest is never the one to go
  const huge = source('huge');
  for (let i = 0; i < 2; i++)
    await here.lookup(
      'list:huge',
      huge.load,
      () => ['owner-huge'],
      undefined,
      () => MAX_WEIGHT * 2,
    );
  t.equal(huge.loads, 1, 'the newest is kept whatever it weighs');
  t.notOk(await remembered(3), 'and everything else went');
});

t.test('entries whose time is up are let go when another is remembered, not kept until the weight bound', async (t) => {
  const [here] = await twoProcesses(t, 200);
  const row = source('x');
  for (let i = 0; i < 3; i++)
    await here.lookup(
      `list:old-${i}`,
      row.load,
      () => [`o-${i}`],
      undefined,
      () => 1_000,
    );
  t.ok(here.held().weight >= 3_000, 'three heavy entries held');
  await new Promise((r) => setTimeout(r, 250));
  await here.lookup(
    'list:new',
    row.load,
    () => ['o-new'],
    undefined,
    () => 10,
  );
  t.same(here.held(), { entries: 1, weight: 10 }, 'only the new one is held');
});
