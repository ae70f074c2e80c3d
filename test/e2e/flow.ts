import type { Test } from 'tap';
import { allProjectors } from '../../projections/index.ts';
import { rebuild } from '../../projections/rebuild.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { api, startTestApp, type TestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

const ADMIN = 'admin@example.test';

/** Every row of every read model, in a stable order, for comparing live models with a rebuild. */
export async function snapshotReadModels(app: TestApp): Promise<Record<string, unknown[]>> {
  const snapshot: Record<string, unknown[]> = {};
  for (const projector of allProjectors) {
    for (const table of projector.tables) {
      const { rows } = await app.deps.pool.query(`SELECT * FROM ${table}`);
      snapshot[table] = rows.map((r) => JSON.stringify(r)).sort();
    }
  }
  return snapshot;
}

async function listAndApprove(app: TestApp, developer: string, admin: string, name: string) {
  const listed = await api(app, 'POST', '/api/v1/developers/agents', {
    token: developer,
    body: { name, venue: 'SPOT_VENUE', minAllocationUsd: 50, successFeePercent: 10, description: `${name} trades` },
  });
  const approved = await api(app, 'POST', `/api/admin/developer-agents/${listed.body.data?.id}/approve`, {
    token: admin,
    body: { notes: 'looks safe', safetyScore: 80 },
  });
  return { listed, approved };
}

/**
 * The first complete flow: a developer lists an agent, an administrator approves it, a user
 * signs in by emailed code and follows it with a virtual pool, and every read model shows it;
 * projectors stopped mid-flow resume exactly where they were; a rebuild equals the live models.
 */
export function flowSuite(t: Test, eventStore: 'postgres' | 'esdb') {
  t.test(`the first flow end to end on ${eventStore}`, async (t) => {
    const app = await startTestApp({ eventStore, config: { ADMIN_EMAILS: ADMIN, READ_YOUR_WRITES_TIMEOUT_MS: '3000' } });
    t.teardown(() => app.close());
    t.equal(app.deps.store.kind, eventStore);

    const developer = await signIn(app, 'dev@example.test');
    const admin = await signIn(app, ADMIN);
    const user = await signIn(app, 'follower@example.test');

    const { listed, approved } = await listAndApprove(app, developer.accessToken, admin.accessToken, 'Momentum');
    t.equal(listed.status, 201);
    t.match(listed.body.data.inboundWebhookSigningSecretReveal, /\S{20,}/, 'the signing secret is shown once');
    t.equal(approved.status, 200);
    t.equal(approved.body.data.betaStatus, 'beta');
    const agentId: string = listed.body.data.id;

    const agents = await api(app, 'GET', '/api/v1/agents', { token: user.accessToken });
    t.ok(agents.body.data.items.some((a: { id: string }) => a.id === agentId), 'the approved agent is followable');

    const follow = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
      token: user.accessToken,
      body: { agentId, tradeMode: 'AUTO_TRADING', walletContext: 'virtual', allocationMode: 'USD_AMOUNT', allocationAmountUsd: 1500 },
    });
    t.equal(follow.status, 200, JSON.stringify(follow.body));
    t.equal(follow.body.data.subscription.allocatedUsd, 1500, 'the response shows its own effect');

    const subs = await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
    t.equal(subs.body.data.length, 1);
    t.match(subs.body.data[0], {
      agent: agentId,
      walletContext: 'virtual',
      allocatedUsd: 1500,
      currentBalanceUsd: 1500,
      withdrawableUsd: 1500,
      allocationBalanceAudit: { depositedUsd: 1500, reconciliationStatus: 'IN_SYNC' },
    });
    const reviews = await api(app, 'GET', `/api/v1/developers/agents/${agentId}/reviews`, { token: developer.accessToken });
    t.equal(reviews.body.data.items[0].status, 'approve');
    const me = await api(app, 'GET', '/api/v1/users/me', { token: developer.accessToken });
    t.equal(me.body.data.role, 'developer', 'listing an agent made the user a developer');

    // Projectors stop; the flow goes on; new projectors resume from the stored checkpoints.
    await app.runtime.runner!.stop();
    const second = await listAndApprove(app, developer.accessToken, admin.accessToken, 'Breakout');
    t.equal(second.listed.status, 201, 'commands are accepted while no projector runs');
    const secondId: string = second.listed.body.data.id;
    const resumed = new ProjectionRunner(app.deps.store, app.deps.pool, allProjectors);
    await resumed.start();
    t.teardown(() => resumed.stop());
    const follow2 = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
      token: user.accessToken,
      body: { agentId: secondId, allocationMode: 'PERCENTAGE_RANGE', allocationPercentageMax: 10 },
    });
    t.equal(follow2.status, 200, JSON.stringify(follow2.body));
    await app.deps.readYourWrites(undefined);
    const deadline = Date.now() + 10_000;
    let after = await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
    while (after.body.data.length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      after = await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
    }
    const byAgent = new Map(after.body.data.map((s: { agent: string; allocatedUsd: number }) => [s.agent, s.allocatedUsd]));
    t.equal(byAgent.get(agentId), 1500);
    t.equal(byAgent.get(secondId), 850, '10% of the 8500 USD left in the virtual wallet');
    const reviews2 = await api(app, 'GET', `/api/v1/developers/agents/${secondId}/reviews`, { token: developer.accessToken });
    t.equal(reviews2.body.data.pagination.total, 1, 'the resumed projector applied the approval once');
    const owned = await api(app, 'GET', '/api/v1/developers/agents', { token: developer.accessToken });
    t.equal(owned.body.data.pagination.total, 2, 'each listing applied once');

    await new Promise((r) => setTimeout(r, 200));
    await resumed.stop();
    const live = await snapshotReadModels(app);
    for (const projector of allProjectors) await rebuild(app.deps.store, app.deps.pool, projector);
    t.same(await snapshotReadModels(app), live, 'a rebuild equals the live read models row for row');
  });
}
