import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';

// Header and body fields that must never reach a log line. Not `*.code`: it would hide `err.code`
// (ECONNREFUSED…), and login codes are never logged (only the dev mail transport writes mails).
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-signature"]',
  '*.refreshToken',
  '*.accessToken',
  '*.recaptcha',
  '*.secret',
  '*.secretKey',
  '*.apiKey',
  '*.inboundWebhookSigningSecretReveal',
];

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, destination?: DestinationStream): Logger {
  return pino({ level: config.LOG_LEVEL, redact: { paths: REDACT, censor: '[redacted]' } }, destination);
}
