import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';

// Header and body fields that must never reach a log line (query parameters: see redactUrl). Not `*.code`: it would hide `err.code`
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

const CENSOR = '[redacted]';

// Query parameters whose values are credentials or one-time secrets (OAuth's tokens, code, state
// and PKCE verifier; API keys, signatures, passwords, captcha tokens), compared without case,
// '-' or '_': `apiKey`, `api_key` and `API-KEY` are one name. Clients should send none of them in
// a URL; when one does, the log must not keep it.
const SENSITIVE_QUERY_PARAMETERS = new Set(
  [
    'access_token',
    'refresh_token',
    'id_token',
    'token',
    'code',
    'code_verifier',
    'state',
    'secret',
    'client_secret',
    'signature',
    'sig',
    'x-signature',
    'api_key',
    'x-api-key',
    'key',
    'password',
    'passwd',
    'recaptcha',
    'authorization',
    'jwt',
  ].map((name) => squash(name)),
);

function squash(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, '');
}

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/** The URL with the value of every sensitive query parameter replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      return SENSITIVE_QUERY_PARAMETERS.has(squash(decodedName(name))) ? `${name}=${CENSOR}` : pair;
    });
  return `${url.slice(0, start)}?${query.join('&')}`;
}

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  headers?: Record<string, string | string[] | undefined>;
  socket?: { remotePort?: number };
}

/** Fastify's request serializer, with the query's secrets redacted; any other `req` is left as logged. */
function serializeRequest(req: LoggedRequest) {
  if (typeof req?.url !== 'string' || typeof req.method !== 'string') return req;
  return {
    method: req.method,
    url: redactUrl(req.url),
    version: req.headers?.['accept-version'],
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, destination?: DestinationStream): Logger {
  return pino({ level: config.LOG_LEVEL, redact: { paths: REDACT, censor: CENSOR }, serializers: { req: serializeRequest } }, destination);
}
