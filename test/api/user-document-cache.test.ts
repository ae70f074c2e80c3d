// GET /api/v1/users/me's document is remembered per API process beside the identity (docs/decisions.md, "users/me remembered with
// the identity"): a user's own change is answered by their next GET at once, by the process that took it and by a second API process
// (one without projections, which hears of changes by notices only), however often; an administrator's tier change reaches both
// within IDENTITY_CACHE_TTL_MS.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { api, startTestApp, type TestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { startServiceProcess } from '../support/process.ts';
import { START, type Position } from '../../infra/eventstore/port.ts';

const ADMIN = 'keeper@example.com';
/** IDENTITY_CACHE_TTL_MS's most (infra/config.ts) */
const BOUND_MS = 2_000;

interface Doc {
  languageCode: string;
  username: string;
  tier: string;
}
const me = async (server: { url: string }, token: string): Promise<Doc> => {
  const res = await api(server, 'GET', '/api/v1/users/me', { token });
  if (res.status !== 200) throw new Error(`GET users/me answered ${res.status}`);
  return (res.body as { data: Doc }).data;
};

t.test("a user's own change is seen at once by their next GET in either process; a tier change within the bound", async (t) => {
  const REDIS_PREFIX = `user-doc-cache-${randomBytes(6).toString('hex')}`;
  const app: TestApp = await startTestApp({ config: { ADMIN_EMAILS: ADMIN, REDIS_PREFIX }, redisKeyPrefix: '' });
  t.teardown(() => app.close());
  const second = await startServiceProcess(app, 'api', { REDIS_PREFIX });
  t.teardown(() => second.stop());
  const admin = await signIn(app, ADMIN);
  const user = await signIn(app, 'changing@example.com');
  const servers = [
    { name: 'the process with the projections', server: app },
    { name: 'a second API process', server: second },
  ];

  let round = 0;
  for (const writer of servers) {
    for (let i = 0; i < 6; i++) {
      round++;
      // both remember the document first (two reads each: the second from memory)
      for (const { server } of [...servers, ...servers]) await me(server, user.accessToken);
      const languageCode = round % 2 === 0 ? 'pt-BR' : 'de';
      const username = `changing_${round}_${randomBytes(3).toString('hex')}`;
      const patched = await api(writer.server, 'PATCH', '/api/v1/users/me', { token: user.accessToken, body: { languageCode, username } });
      t.equal(patched.status, 200, `PATCH through ${writer.name}`);
      // the reader first that did not take the write (its memory the likelier stale), then the writer
      for (const reader of [...servers].reverse()) {
        const doc = await me(reader.server, user.accessToken);
        t.same(
          { languageCode: doc.languageCode, username: doc.username },
          { languageCode, username },
          `round ${round}: written through ${writer.name}, read at once through ${reader.name}`,
        );
      }
    }
  }

  for (const { server } of [...servers, ...servers]) t.equal((await me(server, user.accessToken)).tier, 'free');
  const set = await api(app, 'PUT', `/api/admin/users/${user.userId}/tier`, { token: admin.accessToken, body: { tier: 'premium' } });
  t.equal(set.status, 200);
  t.equal((await me(app, user.accessToken)).tier, 'premium', 'the process that applied the change answers it at once');
  const started = performance.now();
  while ((await me(second, user.accessToken)).tier !== 'premium' && performance.now() - started < BOUND_MS + 1_000) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = performance.now() - started;
  t.ok(ms <= BOUND_MS, `the second process answers the new tier after ${Math.round(ms)} ms (bound ${BOUND_MS} ms)`);
  t.equal((await me(second, user.accessToken)).tier, 'premium', 'and keeps it');
});

t.test('a remembered document older than the caller’s latest write is never answered, whichever process took the write', async (t) => {
  // A notice can lose its race with the caller's next request (or be lost): put such a stale memory in place by hand.
  const REDIS_PREFIX = `user-doc-floor-${randomBytes(6).toString('hex')}`;
  const app: TestApp = await startTestApp({ config: { REDIS_PREFIX }, redisKeyPrefix: '' });
  t.teardown(() => app.close());
  const second = await startServiceProcess(app, 'api', { REDIS_PREFIX });
  t.teardown(() => second.stop());
  const user = await signIn(app, 'floor@example.com');
  const key = `user:${user.userId}`;
  const remember = async (languageCode: string, at: Position) => {
    const document = { ...(await me(app, user.accessToken)), languageCode };
    // (a remembered value not usable is loaded again and remembered: this load's)
    await app.deps.identities.lookup(
      key,
      async () => ({ document, at }),
      () => [user.userId],
      () => false,
    );
  };

  await remember('xx', { commit: 2n ** 62n, prepare: 2n ** 62n });
  t.equal((await me(app, user.accessToken)).languageCode, 'xx', 'a memory no older than the latest write answers (the control)');

  for (const writer of [app, second]) {
    const languageCode = writer === app ? 'pt-BR' : 'de';
    t.equal((await api(writer, 'PATCH', '/api/v1/users/me', { token: user.accessToken, body: { languageCode } })).status, 200);
    await remember('stale', START);
    t.equal((await me(app, user.accessToken)).languageCode, languageCode, `written through ${writer === app ? 'this' : 'another'} process`);
    t.equal((await me(app, user.accessToken)).languageCode, languageCode, 'and remembered anew');
  }
});
