import { createHash, randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import t from 'tap';
import { bullConnection } from '../../workers/index.ts';
import { createQueuedMailer, MAIL_QUEUE } from '../../workers/mail.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const secret = 'a-master-secret-of-at-least-32-characters!';
const mail = { to: 'ann@example.com', subject: 'Your sign-in code', text: 'Your sign-in code is 042917' };

t.test('the outbox job neither reveals the login code nor changes for a retried mail', async (t) => {
  const connection = bullConnection(REDIS_URL);
  const prefix = `bull:test-mail-${randomBytes(6).toString('hex')}`;
  const outbox = (p: string, masterSecret: string) => ({
    queue: new Queue(MAIL_QUEUE, { connection, prefix: p }),
    mailer: createQueuedMailer(connection, p, masterSecret, (err) => t.fail(`the outbox queue failed: ${err.message}`)),
  });
  const ours = outbox(prefix, secret);
  const otherKey = outbox(`${prefix}-other`, `${secret}x`);
  t.teardown(async () => {
    for (const { queue, mailer } of [ours, otherKey]) {
      await mailer.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
    connection.disconnect();
  });
  const jobIds = async (queue: Queue) => (await queue.getJobs(['waiting', 'prioritized', 'delayed'])).map((j) => j.id);

  await ours.mailer.send(mail);
  await ours.mailer.send(mail);
  const ids = await jobIds(ours.queue);
  t.equal(ids.length, 1, 'the same mail enqueued twice is one job');

  // An unkeyed digest lets anyone reading Redis try the million codes offline.
  const unkeyed = createHash('sha256').update(`${mail.to}\n${mail.subject}\n${mail.text}`).digest('hex');
  t.not(ids[0], unkeyed, 'not a plain digest of the mail');
  t.same(await connection.keys(`${prefix}:*${unkeyed}*`), [], 'no Redis key carries the plain digest');

  // The job itself: sealed, so Redis holds neither the code nor the address in clear.
  const job = (await ours.queue.getJobs(['waiting', 'prioritized', 'delayed']))[0]!;
  t.same(Object.keys(job.data), ['sealed']);
  const stored = JSON.stringify(await connection.hgetall(`${prefix}:${MAIL_QUEUE}:${job.id}`));
  t.ok(stored.includes(job.data.sealed), 'read the stored job hash');
  t.notOk(stored.includes('042917'), 'no login code in Redis');
  t.notOk(stored.includes('ann@example.com'), 'no address in Redis');

  await otherKey.mailer.send(mail);
  t.not((await jobIds(otherKey.queue))[0], ids[0], 'the id depends on the master secret');
});
