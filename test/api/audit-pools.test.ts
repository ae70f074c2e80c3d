// GET /api/admin/audit/pools and /api/admin/audit/pools/{poolId} through real HTTP: each
// pool replayed from its events against its read-model row, with every difference named.
import t from 'tap';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { poolFlows } from '../support/pool-flows.ts';

const AUDIT = '/api/admin/audit/pools';

t.test('the auditors see each pool replayed against its row', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const { admin, users, pools } = await poolFlows(app);
  const db = app.deps.pool;
  const get = (path: string, token = admin.accessToken) => api(app, 'GET', path, { token });
  const one = (id: string) => get(`${AUDIT}/${encodeURIComponent(id)}`);

  await t.test('a clean read model: every pool matches, stopped and reopened ones included', async (t) => {
    const res = await get(AUDIT);
    t.equal(res.status, 200, JSON.stringify(res.body));
    const { items, pagination } = res.body.data;
    t.equal(pagination.total, 4);
    t.same(
      items.map((i: { poolId: string }) => i.poolId),
      Object.values(pools).sort(),
      'in pool id order',
    );
    for (const item of items) t.match(item, { status: 'MATCH', differences: [] }, item.poolId);
    const trading = items.find((i: { poolId: string }) => i.poolId === pools.trading);
    t.equal(trading.events, 9, 'follow, 2 adds, 4 trade facts, withdrawal, settings: every event replayed');
    const stopped = await one(pools.stopped);
    t.match(stopped.body.data, { poolId: pools.stopped, status: 'MATCH', events: 6 }, 'the stopped row keeps the figures the replay ends with');
  });

  await t.test('pages of pools', async (t) => {
    const res = await get(`${AUDIT}?page=2&limit=3`);
    t.equal(res.status, 200);
    t.equal(res.body.data.items.length, 1);
    t.same(res.body.data.pagination, { total: 4, limit: 3, page: 2, totalPages: 2, hasNextPage: false, hasPreviousPage: true });
  });

  await t.test('a rendered record that says what its columns do not is named', async (t) => {
    const { rows } = await db.query<{ record_json: string }>('SELECT record_json FROM subscriptions WHERE pool_id = $1', [pools.trading]);
    const rendered = rows[0]!.record_json;
    t.match(JSON.parse(rendered), { isPaused: true }, 'the list answers the rendered record');
    await db.query('UPDATE subscriptions SET record_json = $2 WHERE pool_id = $1', [pools.trading, rendered.replace('"isPaused":true', '"isPaused":false')]);
    const differences = (await one(pools.trading)).body.data.differences;
    t.same(
      differences.map((d: { field: string }) => d.field),
      ['record_json'],
      'the record alone differs',
    );
    t.equal(differences[0].ledger, rendered, 'the replay renders what the row held');
    await db.query('UPDATE subscriptions SET record_json = $2 WHERE pool_id = $1', [pools.trading, rendered]);
    t.equal((await one(pools.trading)).body.data.status, 'MATCH');
  });

  await t.test('a tampered column is named with both values', async (t) => {
    await db.query('UPDATE subscriptions SET confirmed_out_micro = confirmed_out_micro + 1, is_paused = false WHERE pool_id = $1', [pools.trading]);
    const res = await one(pools.trading);
    t.equal(res.status, 200);
    t.equal(res.body.data.status, 'DIFFERENT');
    t.same(res.body.data.differences, [
      { field: 'is_paused', ledger: true, readModel: false },
      { field: 'confirmed_out_micro', ledger: 30_000_000, readModel: 30_000_001 },
    ]);
    const list = await get(AUDIT);
    t.equal(list.body.data.items.find((i: { poolId: string }) => i.poolId === pools.trading).status, 'DIFFERENT', 'the list says so too');
  });

  await t.test('a stopped pool shown as followed, a row gone, a row of no pool', async (t) => {
    await db.query('UPDATE subscriptions SET followed = true WHERE pool_id = $1', [pools.stopped]);
    t.same((await one(pools.stopped)).body.data.differences, [{ field: 'followed', ledger: false, readModel: true }]);
    await db.query('DELETE FROM subscriptions WHERE pool_id = $1', [pools.reopened]);
    t.match((await one(pools.reopened)).body.data, { status: 'MISSING_ROW', events: 6, differences: [] });
    const orphan = `${users[0]!.userId}.no-such-agent.virtual`;
    await db.query(
      `INSERT INTO subscriptions SELECT (jsonb_populate_record(s, jsonb_build_object('pool_id', $2::text, 'agent_id', 'no-such-agent'))).* FROM subscriptions s WHERE pool_id = $1`,
      [pools.trading, orphan],
    );
    t.match((await one(orphan)).body.data, { poolId: orphan, status: 'ORPHAN_ROW', events: 0 });
    t.equal((await get(AUDIT)).body.data.pagination.total, 5, 'the orphan row is listed');
  });

  await t.test('an unknown pool is 404, a malformed id 400', async (t) => {
    const unknown = await one(`${users[0]!.userId}.nobody.virtual`);
    t.equal(unknown.status, 404);
    t.match(unknown.body.error, { code: 'NOT_FOUND', reason: 'POOL_NOT_FOUND' });
    t.equal((await one('not-a-pool-id')).status, 400);
  });

  await t.test('administrators only', async (t) => {
    const user = await signIn(app, 'not-an-admin@example.test');
    for (const path of [AUDIT, `${AUDIT}/${encodeURIComponent(pools.trading)}`]) {
      const forbidden = await get(path, user.accessToken);
      t.equal(forbidden.status, 403, path);
      t.match(forbidden.body.error, { code: 'FORBIDDEN', reason: 'ADMIN_REQUIRED' });
      t.equal((await api(app, 'GET', path)).status, 401);
    }
  });
});
