// What the steps of the end-to-end flows share: the administrator, the subscriptions path, a
// snapshot of every read model, an agent listed and approved, what the user sees after a step.
import type { Test } from 'tap';
import { allProjectors } from '../../../projections/index.ts';
import { rebuild } from '../../../projections/rebuild.ts';
import { api, type TestApp } from '../../support/app.ts';
import type { SignedIn } from '../../support/auth.ts';
import { committedTail } from '../../support/log.ts';

export const ADMIN = 'admin@example.test';
export const SUBS = '/api/v1/users/me/subscriptions';

/** Who takes part in a flow, each signed in. */
export interface People {
  developer: SignedIn;
  admin: SignedIn;
  user: SignedIn;
}

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

/** An agent on the spot venue, listed by `developer` and approved by `admin`. */
export async function listAndApprove(app: TestApp, developer: string, admin: string, name: string) {
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
 * What the user sees after a step: GET /api/v1/wallet (balances per context) and GET
 * subscriptions (one row per pool, oldest first), each row matched against `pools`.
 */
export async function expectSeen(
  t: Test,
  app: TestApp,
  user: SignedIn,
  step: string,
  expected: { wallet: { virtual: number; real: number }; pools: Array<Record<string, unknown>> },
): Promise<Array<Record<string, any>>> {
  const wallet = await api(app, 'GET', '/api/v1/wallet', { token: user.accessToken });
  t.equal(wallet.status, 200, `${step}: GET /api/v1/wallet`);
  const balances = Object.fromEntries(
    (wallet.body.data.wallets as Array<{ walletContext: string; balanceUsd: number }>).map((w) => [w.walletContext, w.balanceUsd]),
  );
  t.same(balances, expected.wallet, `${step}: the wallet's balances`);
  const subs = await api(app, 'GET', SUBS, { token: user.accessToken });
  t.equal(subs.status, 200, `${step}: GET subscriptions`);
  t.equal(subs.body.data.length, expected.pools.length, `${step}: ${expected.pools.length} subscription row(s)`);
  expected.pools.forEach((pool, i) => void t.match(subs.body.data[i], pool, `${step}: row ${i} (${pool.walletContext ?? ''})`));
  return subs.body.data;
}

/**
 * Stops the app's workers, lets the projectors apply every event of the log, stops them, and checks
 * that a rebuild of every read model from the first event equals the live one.
 */
export async function rebuildEqualsLive(t: Test, app: TestApp): Promise<void> {
  await app.runtime.workers?.close();
  // every event committed, though another database's transaction may hold the global read back a moment
  const tail = await committedTail(app);
  if (tail) t.ok(await app.runtime.runner!.waitFor(tail, 10_000), 'the read models applied every event');
  await app.runtime.runner!.stop();
  await expectRebuildEqualsLive(t, app);
}

/** With the projectors stopped: a rebuild of every read model from the first event makes the same tables, each equal to the live one row for row. */
export async function expectRebuildEqualsLive(t: Test, app: TestApp): Promise<void> {
  const live = await snapshotReadModels(app);
  for (const projector of allProjectors) await rebuild(app.deps.store, app.deps.pool, projector);
  const rebuilt = await snapshotReadModels(app);
  t.same(Object.keys(rebuilt), Object.keys(live), 'a rebuild makes the same tables');
  for (const table of Object.keys(live)) t.same(rebuilt[table], live[table], `a rebuild of ${table} equals the live read model`);
}
