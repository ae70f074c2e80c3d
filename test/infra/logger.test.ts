import t from 'tap';
import { createLogger, redactUrl } from '../../infra/logger.ts';

function capture() {
  const lines: string[] = [];
  const logger = createLogger({ LOG_LEVEL: 'info' }, { write: (line: string) => void lines.push(line) });
  return { lines, logger };
}

t.test('an error log keeps err.code: it says what failed', async (t) => {
  const { lines, logger } = capture();
  logger.error({ err: Object.assign(new Error('connect failed'), { code: 'ECONNREFUSED' }) }, 'redis down');
  t.match(JSON.parse(lines[0]!), { err: { code: 'ECONNREFUSED', message: 'connect failed' } });
});

t.test('secrets in headers and bodies are redacted', async (t) => {
  const { lines, logger } = capture();
  logger.info({ req: { headers: { authorization: 'Bearer abc.def', cookie: 'sid=1' } }, body: { refreshToken: 'rt', secret: 's3' } });
  const text = lines.join('');
  for (const value of ['abc.def', 'sid=1', '"rt"', 's3']) t.notOk(text.includes(value), value);
});

t.test('sensitive query parameters are redacted in a logged URL; the rest is kept as sent', async (t) => {
  t.equal(redactUrl('/api/v1/agents'), '/api/v1/agents');
  t.equal(redactUrl('/x?limit=5&venue=SPOT_VENUE'), '/x?limit=5&venue=SPOT_VENUE');
  t.equal(redactUrl('/x?access_token=a&Api-Key=b&api_key=c&token'), '/x?access_token=[redacted]&Api-Key=[redacted]&api_key=[redacted]&token=[redacted]');
  t.equal(redactUrl('/x?%zz=1&state=s&state=t'), '/x?%zz=1&state=[redacted]&state=[redacted]', 'a malformed name is compared as sent');
  t.equal(redactUrl('/x?'), '/x?');
});

t.test('a logged request URL goes through the redaction; a req without one is left alone', async (t) => {
  const { lines, logger } = capture();
  logger.info({ req: { method: 'GET', url: '/a?code=123456&page=2', headers: {} } });
  t.equal(JSON.parse(lines[0]!).req.url, '/a?code=[redacted]&page=2');
  logger.info({ req: { note: 'not a request' } });
  t.same(JSON.parse(lines[1]!).req, { note: 'not a request' });
});
