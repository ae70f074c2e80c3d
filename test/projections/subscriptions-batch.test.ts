import t from 'tap';
import { inTransaction, migrate } from '../../infra/db.ts';
import type { Position, RecordedEvent } from '../../infra/eventstore/port.ts';
import { subscriptionsProjector } from '../../projections/subscriptions/projector.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { freshDatabase } from '../support/db.ts';

const ADMIN = 'admin@example.test';

t.test('the subscriptions projector applies a batch exactly as it applies its events one by one', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'dev@example.test');
  const agents: string[] = [];
  for (const venue of ['SPOT_VENUE', 'PERP_VENUE']) {
    const listed = await api(app, 'POST', '/api/v1/developers/agents', {
      token: dev.accessToken,
      body: { name: `Batch ${venue}`, venue, ...(venue === 'PERP_VENUE' ? { maxLeverage: 5 } : {}) },
    });
    await api(app, 'POST', `/api/admin/developer-agents/${listed.body.data.id}/approve`, { token: admin.accessToken, body: {} });
    agents.push(listed.body.data.id);
  }
  // Follows, follows again with new settings and larger allocations: all three event kinds,
  // several per pool, interleaved across users.
  for (const email of ['a@example.test', 'b@example.test']) {
    const user = await signIn(app, email);
    for (const [i, amount] of [100, 250, 250, 400].entries()) {
      const res = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
        token: user.accessToken,
        body: { agentId: agents[i % 2], allocationMode: 'USD_AMOUNT', allocationAmountUsd: amount + i, isPaused: i === 2 },
      });
      t.equal(res.status, 200, JSON.stringify(res.body));
    }
  }

  const events: RecordedEvent[] = [];
  for (let from: Position | undefined; ; ) {
    const batch = await app.deps.store.readAll({ fromPosition: from, maxCount: 500 });
    events.push(...batch);
    if (batch.length < 500) break;
    from = batch.at(-1)!.position;
  }
  const kinds = new Set(events.filter((e) => e.streamName.startsWith('pool-')).map((e) => e.type));
  t.same([...kinds].sort(), ['AgentFollowed', 'AllocationAdded', 'FollowSettingsUpdated'], 'every kind of pool event is covered');

  const db = await freshDatabase('subbatch');
  t.teardown(() => db.drop());
  await migrate(db.pool, subscriptionsProjector.migrations);
  const snapshot = async () =>
    (await db.pool.query('SELECT * FROM subscriptions ORDER BY pool_id')).rows.map((r) => JSON.stringify(r));

  await inTransaction(db.pool, async (c) => {
    for (const e of events) await subscriptionsProjector.apply(c, e);
  });
  const oneByOne = await snapshot();
  t.equal(oneByOne.length, 4, 'two users, two pools each');
  for (const size of [events.length, 7, 3]) {
    await db.pool.query('DELETE FROM subscriptions');
    await inTransaction(db.pool, async (c) => {
      for (let i = 0; i < events.length; i += size) await subscriptionsProjector.applyBatch!(c, events.slice(i, i + size));
    });
    t.same(await snapshot(), oneByOne, `batches of ${size} give the same rows`);
  }
});
