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
  const mailer = createMailer({ SMTP_URL: smtp.url, MAIL_FROM: 'Test <no-reply@localhost>', NODE_ENV: 'test' }, logger);
  const text = `Olá, código 123456 — ${'x'.repeat(200)}`;
  await mailer.send({ to: 'Zoe@Example.com', subject: 'Código de acesso', text });
  const mail = await smtp.waitForMail('zoe@example.com');
  t.same(mail, { to: 'zoe@example.com', subject: 'Código de acesso', text });
});

t.test('without SMTP_URL outside production the mail goes to the log at info level', async (t) => {
  const { lines, logger } = recordingLogger();
  const mailer = createMailer({ MAIL_FROM: 'x', NODE_ENV: 'development' }, logger);
  await mailer.send({ to: 'a@example.com', subject: 's', text: 'code 111111' });
  const info = lines.find((l) => l.level === 'info');
  t.match(info?.obj, { mail: { to: 'a@example.com', subject: 's', text: 'code 111111' } });
  t.throws(() => createMailer({ MAIL_FROM: 'x', NODE_ENV: 'production' }, logger), /SMTP_URL/);
});

t.test('without RECAPTCHA_SECRET outside production every token passes, with one warning', async (t) => {
  const { lines, logger } = recordingLogger();
  const captcha = createCaptcha({ RECAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/', NODE_ENV: 'development' }, logger);
  t.equal(await captcha.verify(undefined), true);
  t.equal(await captcha.verify('x'), true);
  t.equal(lines.filter((l) => l.level === 'warn').length, 1);
});

t.test('an unreachable captcha provider fails closed', async (t) => {
  const { logger } = recordingLogger();
  // Port 9 (discard) on the loopback: nothing listens there, the connection is refused.
  const captcha = createCaptcha({ RECAPTCHA_SECRET: 's', RECAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/siteverify', NODE_ENV: 'test' }, logger);
  t.equal(await captcha.verify('token'), false);
  t.equal(await captcha.verify(undefined), false, 'no token at all');
});
