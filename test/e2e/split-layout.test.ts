// The split layout (package.json start:api, start:projections, start:workers; runtime.ts ROLES)
// serves a follow end to end: three processes of one role each on one database and Redis. The
// test's own service runs no role (it holds the database, the SMTP server and the Redis scope):
// the sign-in mails go out through the workers process, the read models are the projections
// process's, every request is the API process's.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { api, loadState, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { spawnServiceProcess } from '../support/process.ts';

const ADMIN = 'split-admin@example.test';
const PATH = '/api/v1/users/me/subscriptions';

t.test('an API, a projections and a workers process serve a follow end to end', async (t) => {
  const REDIS_PREFIX = `split-${randomBytes(6).toString('hex')}`;
  const app = await startTestApp({
    roles: { api: false, projections: false, workers: false },
    redisKeyPrefix: '',
    config: { ADMIN_EMAILS: ADMIN, REDIS_PREFIX },
  });
  const env = { REDIS_PREFIX, ADMIN_EMAILS: ADMIN, SMTP_URL: app.deps.config.SMTP_URL! };
  const processes = (['api', 'projections', 'workers'] as const).map((role) => spawnServiceProcess(app, role, env));
  t.teardown(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await app.close();
  });
  const [url] = await Promise.all(processes.map((p) => p.started));
  const server = { url: url! };
  t.equal(app.runtime.url, undefined, 'the test process serves no HTTP');

  // Each code's mail is sent by the workers process's mail outbox, each session read from the projections' users read model.
  const via = { url: server.url, deps: app.deps, waitForMail: app.waitForMail };
  const admin = await signIn(via, ADMIN);
  const developer = await signIn(via, 'split-dev@example.test');
  const user = await signIn(via, 'split-follower@example.test');
  const agentId = await followableAgent(
    server,
    { developer: developer.accessToken, admin: admin.accessToken },
    { name: 'Split Layout', venue: 'SPOT_VENUE' },
    { live: true },
  );

  const follow = await api(server, 'POST', PATH, { token: user.accessToken, body: { agentId, allocationMode: 'USD_AMOUNT', allocationAmountUsd: 250.75 } });
  t.equal(follow.status, 200, 'the API process answers the follow');
  t.match(follow.body.data, { success: true, subscription: { agent: agentId, allocatedUsd: 250.75 } });
  const list = await api(server, 'GET', PATH, { token: user.accessToken });
  t.equal(list.status, 200);
  t.match(list.body.data, [{ agent: agentId, allocatedUsd: 250.75 }], 'the GET right after shows the pool: the projections process applied the follow');
  t.equal(list.body.data.length, 1);
  const wallet = await loadState(app, walletDecider, user.userId);
  t.equal(wallet.state.balances.virtual, 10_000_000_000 - 250_750_000, 'the wallet paid exactly the allocation');
});
