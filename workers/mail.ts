import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import { z } from 'zod';
import type { Mail, Mailer } from '../infra/mailer.ts';
import { decryptSecret, deriveKey, encryptSecret } from '../infra/secrets.ts';
import { hmacHex } from '../infra/tokens.ts';

export const MAIL_QUEUE = 'mail';

export const mailJob = z.object({
  to: z.string().email(),
  subject: z.string().min(1),
  text: z.string(),
});

/** What Redis holds: the mail sealed with AES-GCM, so a reader of Redis learns no login code. */
const sealedJob = z.object({ sealed: z.string() });
const MAIL_JOB_KEY = 'mail-job';

const JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true, // a sent mail (it may hold a login code) is not kept
  removeOnFail: { age: 24 * 3600 }, // failures are kept a day for inspection
} as const;

/** The mail outbox: the API enqueues, the worker delivers over SMTP with retries. */
export function createQueuedMailer(
  connection: ConnectionOptions,
  prefix: string,
  masterSecret: string,
  onerror: (err: Error) => void,
): Mailer & { close(): Promise<void> } {
  const queue = new Queue(MAIL_QUEUE, { connection, prefix });
  queue.on('error', onerror);
  const jobIdKey = deriveKey(masterSecret, 'mail-job-id');
  return {
    async send(mail: Mail) {
      // The same mail enqueued twice (a retried request) is delivered once. Keyed: the text holds a
      // 6-digit login code, which a plain digest in Redis would give away to a million guesses.
      const jobId = hmacHex(jobIdKey, `${mail.to}\n${mail.subject}\n${mail.text}`);
      const sealed = encryptSecret(JSON.stringify(mailJob.parse(mail)), masterSecret, MAIL_JOB_KEY);
      await queue.add('send', { sealed }, { ...JOB_OPTIONS, jobId });
    },
    close: () => queue.close(),
  };
}

export function startMailWorker(connection: ConnectionOptions, prefix: string, smtp: Mailer, masterSecret: string): Worker {
  return new Worker(
    MAIL_QUEUE,
    async (job) => {
      const { sealed } = sealedJob.parse(job.data);
      await smtp.send(mailJob.parse(JSON.parse(decryptSecret(sealed, masterSecret, MAIL_JOB_KEY))));
    },
    { connection, prefix, concurrency: 4 },
  );
}
