import t from 'tap';
import { createCaptcha } from '../../infra/captcha.ts';
import { createMailer } from '../../infra/mailer.ts';
import { startSmtpServer } from '../support/smtp.ts';

// The mailer and captcha adapters the auth routes use, on their own.

function recordingLogger() {
  const lines: Array<{ level: string; obj: unknown; msg?: string }> = [];
  const log = (level: string) => (obj: unknown, msg?: string) => void lines.push({ level, obj, msg });
  return { lines, logger: { info: log('info'), warn: log('warn') } as never };
}

t.test('the mailer delivers over SMTP, non-ASCII and long lines included', async (t) => {
  const smtp = await startSmtpServer();
  t.teardown(() => smtp.close());
  const { logger } = recordingLogger();
  const mailer = createMailer({ SMTP_URL: smtp.url, MAIL_FROM: 'Test <no-reply@localhost>' }, logger);
  const text = `Olá, código 123456 — ${'x'.repeat(200)}`;
  await mailer.send({ to: 'Zoe@Example.com', subject: 'Código de acesso', text });
  const mail = await smtp.waitForMail('zoe@example.com');
  t.same(mail, { to: 'zoe@example.com', subject: 'Código de acesso', text });
});

t.test('without SMTP_URL the mail goes to the log at info level (config refuses that in production)', async (t) => {
  const { lines, logger } = recordingLogger();
  const mailer = createMailer({ MAIL_FROM: 'x' }, logger);
  await mailer.send({ to: 'a@example.com', subject: 's', text: 'code 111111' });
  const info = lines.find((l) => l.level === 'info');
  t.match(info?.obj, { mail: { to: 'a@example.com', subject: 's', text: 'code 111111' } });
});

t.test('without RECAPTCHA_SECRET every token passes, with one warning (config refuses that in production)', async (t) => {
  const { lines, logger } = recordingLogger();
  const captcha = createCaptcha({ RECAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/' }, logger);
  t.equal(await captcha.verify(undefined), true);
  t.equal(await captcha.verify('x'), true);
  t.equal(lines.filter((l) => l.level === 'warn').length, 1);
});

t.test('an unreachable captcha provider fails closed', async (t) => {
  const { logger } = recordingLogger();
  // Port 9 (discard) on the loopback: nothing listens there, the connection is refused.
  const captcha = createCaptcha({ RECAPTCHA_SECRET: 's', RECAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/siteverify' }, logger);
  t.equal(await captcha.verify('token'), false);
  t.equal(await captcha.verify(undefined), false, 'no token at all');
});
