import t from 'tap';
import { inTransaction, migrate } from '../../infra/db.ts';
import { checkpointMigrations } from '../../projections/checkpoints.ts';
import { allProjectors } from '../../projections/index.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { tradeStories, writeStories } from '../support/facts.ts';
import { freshDatabase } from '../support/db.ts';
import { committedLog } from '../support/log.ts';

const ADMIN = 'admin@example.test';

t.test('projectors with applyBatch apply a batch exactly as they apply its events one by one', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'dev@example.test');
  const agents: string[] = [];
  for (const venue of ['SPOT_VENUE', 'PERP_VENUE']) {
    // the spot agent has a webhook endpoint: its follows queue deliveries (projections/webhooks/projector.ts)
    const body = { name: `Batch ${venue}`, venue, ...(venue === 'PERP_VENUE' ? { maxLeverage: 5 } : { webhookUrl: 'https://hooks.example.test/batch' }) };
    agents.push(await followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, body));
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

  // Trades of two pools, every kind of trade event, streams interleaved.
  await writeStories(app, [...tradeStories(`a.${agents[0]}.virtual`, 'a'), ...tradeStories(`b.${agents[1]}.real`, 'b')]);

  const events = await committedLog(app);
  const kinds = new Set(events.filter((e) => e.streamName.startsWith('pool-')).map((e) => e.type));
  t.same([...kinds].sort(), ['AgentFollowed', 'AllocationAdded', 'FollowSettingsUpdated'], 'every kind of pool event is covered');

  const count = (type: string) => events.filter((e) => e.type === type).length;
  t.ok(count('BetaSeatTaken') > 0, 'beta seats are covered');
  t.ok(count('WalletDebited') > 0, 'wallet transfers are covered');
  const tradeKinds = new Set(events.filter((e) => e.streamName.startsWith('trade-')).map((e) => e.type));
  t.same(
    [...tradeKinds].sort(),
    [
      'EntryCancelled',
      'EntryExpired',
      'EntryPending',
      'StopMoved',
      'TargetHit',
      'TargetsSet',
      'TradeClosed',
      'TradeFilled',
      'TradeMarked',
      'TradeReduced',
      'TradeRejected',
      'TradeRequested',
      'TradeSettled',
      'TrailingArmed',
    ],
    'every kind of trade event is covered',
  );

  const db = await freshDatabase('batcheq');
  t.teardown(() => db.drop());
  const batched = allProjectors.filter((p) => p.applyBatch);
  t.same(
    batched.map((p) => p.name).sort(),
    ['agent-figures', 'subscriptions', 'trades', 'transfers', 'wallets', 'webhooks'],
    'the projectors with a batch path',
  );
  await migrate(db.pool, [...checkpointMigrations, ...batched.flatMap((p) => p.migrations)]);
  // The webhook outbox is no rebuilt table: its deliveries compared in their log order (seq), without the numbers themselves.
  const outbox = `SELECT d.agent_id, d.event_id, d.type, d.body, d.occurred_at, d.next_attempt_at,
    (SELECT array_agg(l.lane || ' ' || coalesce(l.signal_key, '-') ORDER BY l.lane) FROM webhook_lanes l WHERE l.agent_id = d.agent_id AND l.seq = d.seq) lanes
    FROM webhook_deliveries d ORDER BY d.seq`;
  for (const projector of batched) {
    const hooks = projector.name === 'webhooks';
    const snapshot = async () => {
      const rows: string[] = [];
      for (const table of projector.tables) {
        rows.push(...(await db.pool.query(`SELECT * FROM ${table}`)).rows.map((r) => JSON.stringify(r)).sort());
      }
      if (hooks) rows.push(...(await db.pool.query(outbox)).rows.map((r) => JSON.stringify(r)));
      return rows;
    };
    const tables = hooks ? [...projector.tables, 'webhook_deliveries', 'webhook_lanes'] : projector.tables;
    const clear = () => Promise.all(tables.map((table) => db.pool.query(`DELETE FROM ${table}`)));
    await inTransaction(db.pool, async (c) => {
      for (const e of events) await projector.apply(c, e);
    });
    const oneByOne = await snapshot();
    t.ok(oneByOne.length >= 2, `${projector.name}: rows to compare`);
    if (hooks) t.ok((await db.pool.query('SELECT 1 FROM webhook_deliveries')).rowCount! >= 2, 'webhooks: deliveries to compare');
    for (const size of [events.length, 7, 3]) {
      await clear();
      await inTransaction(db.pool, async (c) => {
        for (let i = 0; i < events.length; i += size) await projector.applyBatch!(c, events.slice(i, i + size));
      });
      t.same(await snapshot(), oneByOne, `${projector.name}: batches of ${size} give the same rows`);
    }
  }
});
