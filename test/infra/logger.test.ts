import t from 'tap';
import { createLogger } from '../../infra/logger.ts';

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
