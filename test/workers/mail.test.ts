import { createHash, randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import t from 'tap';
import { bullConnection } from '../../workers/index.ts';
import { createQueuedMailer, MAIL_QUEUE } from '../../workers/mail.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const secret = 'a-master-secret-of-at-least-32-characters!';
const mail = { to: 'ann@example.com', subject: 'Your sign-in code', text: 'Your sign-in code is 042917' };

t.test('the outbox job id neither reveals the login code nor changes for a retried mail', async (t) => {
  const connection = bullConnection(REDIS_URL);
  const prefix = `bull:test-mail-${randomBytes(6).toString('hex')}`;
  const outbox = (p: string, masterSecret: string) => ({
    queue: new Queue(MAIL_QUEUE, { connection, prefix: p }),
    mailer: createQueuedMailer(connection, p, masterSecret),
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

  await otherKey.mailer.send(mail);
  t.not((await jobIds(otherKey.queue))[0], ids[0], 'the id depends on the master secret');
});
