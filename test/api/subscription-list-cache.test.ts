// GET /api/v1/users/me/subscriptions is remembered per API process beside the identity (docs/decisions.md, "The subscription list
// remembered"): a user's own add or withdrawal is answered by their next GET at once, by the process that took it and by a second API
// process (one without projections, which hears of changes by notices only), however often; a change nobody asked for through the API
// (a trade the agent opened on the pool) reaches the process that applied it at once and the other by
// the notice, well within IDENTITY_CACHE_TTL_MS; another user's change never drops this one's list.
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { poolId } from '../../domain/pool/state.ts';
import { START, type Position } from '../../infra/eventstore/port.ts';
import { renderedOk, type RenderedOk } from '../../api/envelope.ts';
import { noticeChannel } from '../../infra/identity-cache.ts';
import { poolsGroupOf } from '../../projections/subscriptions/queries.ts';
import { followableAgent } from '../support/agents.ts';
import { api, dispatch, startTestApp, type TestApp } from '../support/app.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { startServiceProcess } from '../support/process.ts';
import { until } from '../support/until.ts';
import { committedTail } from '../support/log.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';

const ADMIN = 'list-keeper@example.com';
const SUBS = '/api/v1/users/me/subscriptions';
/** IDENTITY_CACHE_TTL_MS's most (infra/config.ts) */
const BOUND_MS = 2_000;
/** well inside the bound: what only the notice makes (the pub/sub message takes milliseconds) */
const NOTICE_MS = 1_000;

interface Row {
  agent: string;
  walletContext: string;
  allocatedUsd: number;
  inUseUsd: number;
}
const list = async (server: { url: string }, user: SignedIn, query = ''): Promise<Row[]> => {
  const res = await api(server, 'GET', `${SUBS}${query}`, { token: user.accessToken });
  if (res.status !== 200) throw new Error(`GET subscriptions answered ${res.status}`);
  return (res.body as { data: Row[] }).data;
};
const allocated = (rows: Row[], agentId: string) => rows.find((r) => r.agent === agentId)?.allocatedUsd;

async function setUp(t: Test, prefix: string) {
  const REDIS_PREFIX = `${prefix}-${randomBytes(6).toString('hex')}`;
  const app: TestApp = await startTestApp({ config: { ADMIN_EMAILS: ADMIN, REDIS_PREFIX }, redisKeyPrefix: '' });
  t.teardown(() => app.close());
  const second = await startServiceProcess(app, 'api', { REDIS_PREFIX });
  t.teardown(() => second.stop());
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, `${prefix}-dev@example.com`);
  const agentId = await followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, { name: `${prefix} agent` }, { live: true });
  return { app, second, agentId };
}

t.test("a user's own add or withdrawal is seen at once by their next GET in either process; a trade within the bound", async (t) => {
  const { app, second, agentId } = await setUp(t, 'list-cache');
  const user = await signIn(app, 'lister@example.com');
  const other = await signIn(app, 'other-lister@example.com');
  t.equal((await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, allocationAmountUsd: 500 } })).status, 200);
  t.equal((await api(app, 'POST', SUBS, { token: other.accessToken, body: { agentId, allocationAmountUsd: 300 } })).status, 200);
  const servers = [
    { name: 'the process with the projections', server: app },
    { name: 'a second API process', server: second },
  ];

  let expected = 500;
  let round = 0;
  for (const writer of servers) {
    for (let i = 0; i < 6; i++) {
      round++;
      // both remember the list first (two reads each: the second from memory), the full list and one context's
      for (const { server } of [...servers, ...servers]) {
        await list(server, user);
        await list(server, user, '?walletContext=virtual');
      }
      const move = round % 2 === 0 ? 'withdraw' : 'add';
      const moved = await api(writer.server, 'POST', `${SUBS}/${agentId}/allocation/${move}`, { token: user.accessToken, body: { amountUsd: 7 } });
      t.equal(moved.status, 200, `${move} through ${writer.name}`);
      expected += move === 'add' ? 7 : -7;
      // the reader first that did not take the write (its memory the likelier stale), then the writer
      for (const reader of [...servers].reverse()) {
        t.equal(allocated(await list(reader.server, user), agentId), expected, `round ${round}: ${move} through ${writer.name}, read through ${reader.name}`);
        t.equal(allocated(await list(reader.server, user, '?walletContext=virtual'), agentId), expected, 'and in the one context');
      }
    }
  }
  t.equal(allocated(await list(app, other), agentId), 300, "another user's list is their own");

  // A trade the agent opens on the pool: no write of the user's, so only the notice (or the bound) drops the remembered lists.
  // Both load the list anew just before it (the user's add makes theirs older than the floor), so without the notice the second
  // process would answer the old one for about the bound.
  t.equal((await api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: user.accessToken, body: { amountUsd: 1 } })).status, 200);
  for (const { server } of [...servers, ...servers]) t.equal((await list(server, user))[0]!.inUseUsd, 0);
  await dispatch(app, 'RecordPoolFact', {
    poolId: poolId(user.userId, agentId, 'virtual'),
    fact: { type: 'OpenTrade', data: oneTrade('tr-list-1', 40_000_000) },
  });
  t.equal((await list(app, user))[0]!.inUseUsd, 40, 'the process that applied the trade answers it at once');
  const started = performance.now();
  while ((await list(second, user))[0]!.inUseUsd === 0 && performance.now() - started < BOUND_MS + 1_000) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = performance.now() - started;
  t.ok(ms <= NOTICE_MS, `the second process answers the trade after ${Math.round(ms)} ms, by the notice (the bound is ${BOUND_MS} ms)`);
  t.equal((await list(second, user))[0]!.inUseUsd, 40, 'and keeps it');
});

t.test('a remembered list older than the caller’s latest write is never answered, whichever process took the write', async (t) => {
  // A notice can lose its race with the caller's next request (or be lost): put such a stale memory in place by hand, once every
  // notice sent so far has come back (so none drops it), and see the floor check alone refuse it.
  const { app, second, agentId } = await setUp(t, 'list-floor');
  const user = await signIn(app, 'floor-lister@example.com');
  t.equal((await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } })).status, 200);
  const key = `subscriptions:${user.userId}:`;
  const groups = () => [poolsGroupOf(user.userId)];
  const stale = JSON.stringify([{ agent: 'stale', allocatedUsd: -1 }]);
  const remember = async (at: Position) => {
    // (a remembered value not usable is loaded again and remembered: this load's)
    await app.deps.identities.lookup(
      key,
      async () => ({ answer: renderedOk(stale), at }),
      groups,
      () => false,
    );
    const held = await app.deps.identities.lookup<{ answer: RenderedOk; at: Position }>(
      key,
      () => Promise.reject(new Error('not remembered')),
      groups,
      () => true,
    );
    t.equal(held?.answer.bytes.toString(), renderedOk(stale).bytes.toString(), 'the stale list is held');
  };
  /** A marker's notice, published on the app's connection after every notice its runner sent, has come back to it by pub/sub. */
  const noticesHeard = async () => {
    const marker = `marker:${randomBytes(4).toString('hex')}`;
    let loads = 0;
    const probe = () =>
      app.deps.identities.lookup(
        `probe:${marker}`,
        async () => ++loads,
        () => [marker],
      );
    await probe();
    await app.deps.redis.publish(noticeChannel(app.deps.redis), JSON.stringify([marker]));
    await until('the marker notice heard', async () => ((await probe()) ?? 0) > 1, 5_000);
  };

  t.equal(allocated(await list(app, user), agentId), 100, 'the follow is read (its batch is applied)');
  await noticesHeard();
  await remember({ commit: 2n ** 62n, prepare: 2n ** 62n });
  t.equal((await list(app, user))[0]!.agent, 'stale', 'a memory no older than the latest write answers (the control)');

  let expected = 100;
  for (const writer of [app, second]) {
    const through = writer === app ? 'this' : 'another';
    t.equal((await api(writer, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: user.accessToken, body: { amountUsd: 5 } })).status, 200);
    expected += 5;
    // the write applied and its notices heard, so only the floor check stands between the stale list and the answer
    await app.deps.readYourWrites(await committedTail(app));
    await noticesHeard();
    await remember(START);
    t.equal(allocated(await list(app, user), agentId), expected, `written through ${through} process`);
    t.equal(allocated(await list(app, user), agentId), expected, 'and remembered anew');
  }
});
