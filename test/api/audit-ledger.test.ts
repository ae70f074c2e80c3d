// GET /api/v1/users/me/subscriptions/{agentId}/ledger through real HTTP (the auditors' view): the
// pool's events replayed from its stream with the running figures after each, paginated, and `at`.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { poolId } from '../../domain/pool/state.ts';
import { api, dispatch, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';
import { signIn } from '../support/auth.ts';

const SUBS = '/api/v1/users/me/subscriptions';

t.test('the pool ledger: every event with its running figures, pages, and the record as of a time', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  const user = await signIn(app, 'auditor-user@example.test');
  const other = await signIn(app, 'someone-else@example.test');
  const agentId = await followableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    { name: 'Ledgered', venue: 'SPOT_VENUE', successFeePercent: 10 },
    { live: true },
  );
  const id = poolId(user.userId, agentId, 'virtual');
  const ledger = (query = '', token = user.accessToken, agent = agentId) => api(app, 'GET', `${SUBS}/${agent}/ledger${query}`, { token });
  const ok = (res: { status: number; body: unknown }) => t.equal(res.status, 200, JSON.stringify(res.body));

  const beforeFollow = new Date(Date.now() - 60_000).toISOString();
  ok(await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } }));
  ok(await api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: user.accessToken, body: { amountUsd: 50.5 } }));
  await dispatch(app, 'RecordPoolFact', { poolId: id, fact: { type: 'OpenTrade', data: oneTrade('tr-1', 40_000_000) } });
  await dispatch(app, 'RecordPoolFact', { poolId: id, fact: { type: 'CloseTrade', data: { tradeId: 'tr-1', realizedPnlMicro: 12_345_678 } } });
  ok(await api(app, 'POST', `${SUBS}/${agentId}/allocation/withdraw`, { token: user.accessToken, body: { amountUsd: 30 } }));

  await t.test('every event, oldest first, with its own money and the figures after it', async (t) => {
    const res = await ledger();
    ok(res);
    const { items, pagination } = res.body.data;
    t.same(
      items.map((i: { type: string }) => i.type),
      ['AgentFollowed', 'AllocationAdded', 'AllocationAdded', 'TradeOpened', 'TradeClosed', 'WithdrawalRequested'],
    );
    t.same(
      items.map((i: { sequence: number }) => i.sequence),
      [1, 2, 3, 4, 5, 6],
    );
    t.match(pagination, { total: 6, page: 1, limit: 20, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    t.notOk('subscription' in res.body.data, 'no record without `at`');
    t.match(items[0], { eventId: String, time: String, amounts: {}, followed: true, balances: { allocatedUsd: 0 } });
    t.same(items[1].amounts, { amountUsd: 100 });
    t.same(items[2].amounts, { amountUsd: 50.5 });
    t.match(items[2].balances, { allocatedUsd: 150.5, currentBalanceUsd: 150.5, withdrawableUsd: 150.5, pendingDeltaUsd: 0 });
    t.same(items[3].amounts, { marginUsd: 40 });
    t.match(items[3].balances, { withdrawableUsd: 110.5, allocationBalanceAudit: { lockedMarginUsd: 40, ledgerAvailableUsd: 110.5 } });
    t.same(items[4].amounts, { realizedPnlUsd: 12.345678 });
    t.match(items[4].balances, {
      currentBalanceUsd: 162.845678,
      allocationBalanceAudit: { realizedPnlUsd: 12.345678, netRealizedProfitUsd: 12.345678, estimatedSuccessFeeUsd: 1.234567, reconciliationStatus: 'IN_SYNC' },
    });
    t.same(items[5].amounts, { amountUsd: 30 });
    const [record] = (await api(app, 'GET', SUBS, { token: user.accessToken })).body.data;
    const last = items[5].balances;
    t.same(
      {
        allocatedUsd: last.allocatedUsd,
        currentBalanceUsd: last.currentBalanceUsd,
        withdrawableUsd: last.withdrawableUsd,
        pendingDeltaUsd: last.pendingDeltaUsd,
        audit: last.allocationBalanceAudit,
      },
      {
        allocatedUsd: record.allocatedUsd,
        currentBalanceUsd: record.currentBalanceUsd,
        withdrawableUsd: record.withdrawableUsd,
        pendingDeltaUsd: record.pendingDeltaUsd,
        audit: record.allocationBalanceAudit,
      },
      'the replay ends where the read model is',
    );
  });

  await t.test('pages of the history', async (t) => {
    const res = await ledger('?page=2&limit=2');
    ok(res);
    t.same(
      res.body.data.items.map((i: { sequence: number }) => i.sequence),
      [3, 4],
    );
    t.same(res.body.data.pagination, { total: 6, limit: 2, page: 2, totalPages: 3, hasNextPage: true, hasPreviousPage: true });
    const past = await ledger('?page=9&limit=2');
    t.same(past.body.data.items, [], 'past the end: an empty page');
    for (const bad of ['?limit=0', '?limit=101', '?page=0']) t.equal((await ledger(bad)).status, 400, bad);
  });

  await t.test('`at` before the follow: no events, no subscription', async (t) => {
    const res = await ledger(`?at=${encodeURIComponent(beforeFollow)}`);
    ok(res);
    t.same(res.body.data.items, []);
    t.equal(res.body.data.pagination.total, 0);
    t.equal(res.body.data.subscription, null);
  });

  await t.test('`at` after the withdrawal: the record as it was then, not what came later', async (t) => {
    const items = (await ledger()).body.data.items;
    const withdrawnAt = items[5].time as string;
    await sleep(5);
    ok(await api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: user.accessToken, body: { amountUsd: 7 } }));
    const then = await ledger(`?at=${encodeURIComponent(withdrawnAt)}`);
    ok(then);
    t.equal(then.body.data.pagination.total, 6, 'the later add is not in the past');
    t.match(then.body.data.subscription, { agent: agentId, walletContext: 'virtual', allocatedUsd: 120.5, currentBalanceUsd: 132.845678 });
    const offset = new Date(withdrawnAt).getTime();
    const sameInstant = new Date(offset).toISOString().replace('Z', '+00:00');
    t.equal((await ledger(`?at=${encodeURIComponent(sameInstant)}`)).body.data.pagination.total, 6, 'an offset names the same instant');
    const now = await ledger();
    t.equal(now.body.data.pagination.total, 7);
    t.equal(now.body.data.items[6].balances.allocatedUsd, 127.5);
  });

  await t.test('a bad `at` or context is a 400', async (t) => {
    for (const bad of ['yesterday', '2025-13-01T00:00:00Z', '1700000000000', '']) {
      const res = await ledger(`?at=${encodeURIComponent(bad)}`);
      t.equal(res.status, 400, bad);
      t.match(res.body, { success: false, error: { code: 'BAD_REQUEST', reason: 'VALIDATION_FAILED' } });
    }
    t.equal((await ledger('?walletContext=paper')).status, 400);
  });

  await t.test("someone else's pool, another context, or no token: not readable", async (t) => {
    const theirs = await ledger('', other.accessToken);
    t.equal(theirs.status, 404);
    t.match(theirs.body.error, { code: 'NOT_FOUND', reason: 'SUBSCRIPTION_NOT_FOUND' });
    t.equal((await ledger('?walletContext=real')).status, 404, 'the real context is another pool');
    t.equal((await api(app, 'GET', `${SUBS}/${agentId}/ledger`)).status, 401);
  });

  await t.test("the OpenAPI document describes the auditors' routes", async (t) => {
    const doc = await api(app, 'GET', '/docs/json');
    t.equal(doc.status, 200);
    const ledgerDoc = doc.body.paths['/api/v1/users/me/subscriptions/{agentId}/ledger'].get;
    t.same(
      ledgerDoc.parameters
        .filter((p: { in: string }) => p.in === 'query')
        .map((p: { name: string }) => p.name)
        .sort(),
      ['at', 'limit', 'page', 'walletContext'],
    );
    t.ok(ledgerDoc.responses['200'].content['application/json'].schema, 'the answer is described');
    t.ok(doc.body.paths['/api/admin/audit/pools'].get && doc.body.paths['/api/admin/audit/pools/{poolId}'].get);
  });

  await t.test("a stopped pool's history stays readable, ending unfollowed", async (t) => {
    ok(await api(app, 'DELETE', `${SUBS}/${agentId}`, { token: user.accessToken }));
    const res = await ledger('?walletContext=virtual');
    ok(res);
    const items = res.body.data.items;
    t.same(
      items.slice(-2).map((i: { type: string }) => i.type),
      ['WithdrawalRequested', 'PoolClosed'],
    );
    t.same(items.at(-2).amounts, { amountUsd: 139.845678 }, 'the stop paid out the balance');
    t.match(items.at(-2).balances, { allocatedUsd: 0, currentBalanceUsd: 0 });
    t.match(items.at(-1), { followed: false, balances: null });
    const now = await ledger(`?at=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    t.equal(now.body.data.subscription, null, 'not followed now');
  });
});
