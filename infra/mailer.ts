import nodemailer from 'nodemailer';
import type { BaseLogger } from 'pino';
import type { Config } from './config.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Port: sends one plain-text mail. */
export interface Mailer {
  send(mail: Mail): Promise<void>;
}

type Log = Pick<BaseLogger, 'info' | 'warn'>;

/**
 * SMTP through nodemailer to SMTP_URL. Without SMTP_URL outside production (config refuses a
 * production start without it) the mail is written to the log at info level: the documented
 * development path for reading login codes on a developer machine.
 */
export function createMailer(config: Pick<Config, 'SMTP_URL' | 'MAIL_FROM'>, logger: Log): Mailer {
  if (!config.SMTP_URL) {
    logger.warn('SMTP_URL is not set: mails are written to the log (development only)');
    return {
      async send(mail) {
        logger.info({ mail: { to: mail.to, subject: mail.subject, text: mail.text } }, 'mail (development log transport)');
      },
    };
  }
  const transport = nodemailer.createTransport(config.SMTP_URL);
  return {
    async send(mail) {
      await transport.sendMail({ from: config.MAIL_FROM, to: mail.to, subject: mail.subject, text: mail.text });
    },
  };
}
