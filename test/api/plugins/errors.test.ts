// The error plugin classifies what a handler throws: a refusal of the catalogue answers its status
// and reason, an invariant broken (a bug) answers 500 INTERNAL_ERROR without its message and is
// logged at error level with it, so it pages someone. A bare Fastify app with only the plugin.
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import t from 'tap';
import { invariant, refuse } from '../../../domain/shared/errors.ts';
import { registerErrorHandling } from '../../../api/plugins/errors.ts';

async function appLogging() {
  const lines: Array<{ level: number; msg: string }> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const app = Fastify({ logger: { level: 'info', stream } });
  registerErrorHandling(app);
  app.get('/refused', async () => {
    throw refuse('BETA_FULL', 'every beta seat is taken');
  });
  app.get('/impossible', async () => {
    invariant(false, 'transfer t-1: the from endpoint is not a pool');
  });
  await app.ready();
  return { app, lines };
}

const ERROR_LEVEL = 50;

t.test('an invariant broken answers 500 INTERNAL_ERROR, keeps its message out of the answer and logs it at error level', async (t) => {
  const { app, lines } = await appLogging();
  t.teardown(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/impossible' });
  t.equal(res.statusCode, 500);
  t.same(res.json(), { success: false, error: { code: 'INTERNAL_SERVER_ERROR', reason: 'INTERNAL_ERROR', message: 'internal server error' } });
  t.notMatch(res.body, /endpoint/, 'the internal message is not disclosed');
  const logged = lines.filter((l) => l.level === ERROR_LEVEL);
  t.equal(logged.length, 1, 'one error line');
  t.match(logged[0]!.msg, /invariant violated: transfer t-1: the from endpoint is not a pool/);
});

t.test('a refusal answers its own status and reason, and is no error line', async (t) => {
  const { app, lines } = await appLogging();
  t.teardown(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/refused' });
  t.equal(res.statusCode, 409);
  t.same(res.json(), { success: false, error: { code: 'CONFLICT', reason: 'BETA_FULL', message: 'every beta seat is taken' } });
  t.same(
    lines.filter((l) => l.level >= ERROR_LEVEL),
    [],
    'nothing logged at error level',
  );
});
