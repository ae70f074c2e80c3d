import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import t from 'tap';
import { api, startTestApp } from '../support/app.ts';
import { codeOf, TEST_USER_AGENT } from '../support/auth.ts';

// Two deployments on one Redis, told apart only by REDIS_PREFIX: they share the test's key scope
// on purpose, so nothing but the prefix separates them.

const ua = { 'user-agent': TEST_USER_AGENT };

async function keysUnder(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys.sort();
}

t.test('deployments with different REDIS_PREFIX share a Redis without sharing keys', async (t) => {
  const scope = `test:${randomBytes(6).toString('hex')}:`;
  const a = await startTestApp({ redisKeyPrefix: scope, config: { REDIS_PREFIX: 'deploy-a' } });
  t.teardown(() => a.close());
  const b = await startTestApp({ redisKeyPrefix: scope, config: { REDIS_PREFIX: 'deploy-b' } });
  t.teardown(() => b.close());
  const redis = new Redis(a.deps.config.REDIS_URL);
  t.teardown(() => redis.disconnect());
  t.teardown(async () => {
    const keys = [...(await keysUnder(redis, `deploy-a:${scope}*`)), ...(await keysUnder(redis, `deploy-b:${scope}*`))];
    if (keys.length) await redis.del(...keys);
  });

  await t.test('a login code from app A does not verify on app B', async (t) => {
    const email = 'shared-redis@example.test';
    const lookup = await api(a, 'POST', '/api/auth/lookup', { headers: ua, body: { email, recaptcha: 'tok', fingerprint: 'fp' } });
    t.equal(lookup.status, 200);
    const code = codeOf(await a.waitForMail(email));
    const onB = await api(b, 'POST', '/api/auth/verify', { headers: ua, body: { email, code, recaptcha: 'tok' } });
    t.equal(onB.status, 400, 'B has no code for this email');
    t.equal(onB.body.error.message, 'invalid or expired code');
    t.notOk(
      b.mails.some((m) => m.to === email),
      "B's mail worker never took A's mail job",
    );
    const lookupOnB = await api(b, 'POST', '/api/auth/lookup', { headers: ua, body: { email, recaptcha: 'tok', fingerprint: 'fp' } });
    t.equal(lookupOnB.status, 200, "A's lookup throttle does not apply on B");
    const onA = await api(a, 'POST', '/api/auth/verify', { headers: ua, body: { email, code, recaptcha: 'tok' } });
    t.equal(onA.status, 200, "B's wrong attempt and lookup left A's code alone");
  });

  await t.test('login codes and BullMQ queues live under each deployment’s prefix', async (t) => {
    t.equal(a.runtime.keyPrefix, `deploy-a:${scope}`);
    const aKeys = await keysUnder(redis, `deploy-a:${scope}*`);
    const bKeys = await keysUnder(redis, `deploy-b:${scope}*`);
    for (const [name, keys, prefix] of [
      ['A', aKeys, `deploy-a:${scope}`],
      ['B', bKeys, `deploy-b:${scope}`],
    ] as const) {
      t.ok(
        keys.some((k) => k.startsWith(`${prefix}auth:`)),
        `${name}: login keys under its prefix`,
      );
      t.ok(
        keys.some((k) => k.startsWith(`${prefix}bull:mail:`)),
        `${name}: the mail queue under its prefix`,
      );
      t.ok(
        keys.some((k) => k.startsWith(`${prefix}bull:transfer-recovery:`)),
        `${name}: the recovery queue under its prefix`,
      );
    }
    t.same(await keysUnder(redis, `${scope}*`), [], 'nothing outside the prefixes');
    t.same(await keysUnder(redis, `bull:${scope}*`), [], 'no queue under the old fixed prefix');
  });
});
