// A service process killed with SIGKILL in the middle of 200 concurrent follows: after a restart,
// every transfer is either complete or compensated, nothing is applied twice, and each user's
// wallet plus pools still hold exactly the starting balance.
import t from 'tap';
import { endpointKey } from '../../domain/transfer/plan.ts';
import { agentFollowedSchema, allocationAddedSchema } from '../../domain/pool/events.ts';
import { walletDebitedSchema, walletRefundedSchema } from '../../domain/wallet/events.ts';
import { walletStream } from '../../domain/wallet/state.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent, seatHolders } from '../support/agents.ts';
import { manyUsers, signIn, type SignedIn } from '../support/auth.ts';
import { startServiceProcess, type ServiceProcess } from '../support/process.ts';

const ADMIN = 'admin@example.test';
const START_MICRO = 10_000_000_000;
const USERS = 20;
const AGENTS = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('SIGKILL in the middle of 200 concurrent follows loses nothing and applies nothing twice', async (t) => {
  // This app's own recovery worker sweeps too (every 5 s, with the default 10 s grace), a second
  // process recovering next to the restarted one.
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN, TRANSFER_RECOVERY_INTERVAL_MS: '5000' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'dev@example.test');
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  // Two beta agents among ten, so seats taken by killed follows are part of the picture.
  const agents = await Promise.all(
    Array.from({ length: AGENTS }, (_, i) =>
      followableAgent(app, tokens, { name: `Crash ${i}`, minAllocationUsd: 10, ...(i < 2 ? { maxBetaUsers: 50 } : {}) }, { live: i >= 2 }),
    ),
  );
  const users = await manyUsers(app, 'crash', USERS);
  const env = {
    TRANSFER_RECOVERY_GRACE_MS: '1000',
    TRANSFER_RECOVERY_INTERVAL_MS: '200',
    REDIS_PREFIX: `crash-${app.redisKeyPrefix.replace(/[^A-Za-z0-9]/g, '')}`,
  };
  const { store } = app.deps;

  /** Every transfer of the users, from the wallet and pool streams: debited, credited, refunded. */
  const ledger = async () => {
    const debits = new Map<string, { userId: string; amountMicro: number; poolId: string }>();
    const refunds = new Set<string>();
    const credits = new Map<string, number>();
    const pools = new Map<string, RecordedEvent[]>();
    for (const user of users) {
      for (const e of await store.readStream(walletStream(user.userId))) {
        if (e.type === 'WalletDebited') {
          const { transfer } = walletDebitedSchema.parse(e.data);
          debits.set(transfer.transferId, { userId: user.userId, amountMicro: transfer.amountMicro, poolId: endpointKey(transfer.to).slice('pool:'.length) });
        } else if (e.type === 'WalletRefunded') refunds.add(walletRefundedSchema.parse(e.data).transferId);
      }
      for (const agentId of agents) {
        const poolId = `${user.userId}.${agentId}.virtual`;
        const events = await store.readStream(`pool-${poolId}`);
        pools.set(poolId, events);
        for (const e of events.filter((x) => x.type === 'AllocationAdded')) {
          const { transferId } = allocationAddedSchema.parse(e.data);
          credits.set(transferId, (credits.get(transferId) ?? 0) + 1);
        }
      }
    }
    return { debits, refunds, credits, pools };
  };

  let child: ServiceProcess = await startServiceProcess(app, 'all', env);
  t.teardown(() => child.stop());
  const follows = users.flatMap((user) => agents.map((agentId) => ({ user, agentId })));
  t.equal(follows.length, 200);
  const burst = Promise.all(
    follows.map(({ user, agentId }) =>
      api(child, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } }).then(
        (r) => r.status,
        () => 0, // the connection died with the process
      ),
    ),
  );
  // Killed while transfers are between their two steps: once 20 debits are in and credits lag behind.
  for (;;) {
    const { rows } = await app.deps.pool.query<{ debits: number; credits: number }>(
      `SELECT count(*) FILTER (WHERE event_type = 'WalletDebited')::int AS debits, count(*) FILTER (WHERE event_type = 'AllocationAdded')::int AS credits FROM events`,
    );
    if (rows[0]!.debits >= 20 && rows[0]!.debits > rows[0]!.credits) break;
    await sleep(1);
  }
  child.child.kill('SIGKILL');
  await child.exited;
  const statuses = await burst;
  t.ok(statuses.filter((s) => s === 0).length > 0, `the kill cut requests off (${statuses.filter((s) => s === 200).length} answered 200 before it)`);
  t.equal(statuses.filter((s) => s >= 500).length, 0, 'no request answered 5xx before the kill');

  const atKill = await ledger();
  const interrupted = [...atKill.debits.keys()].filter((id) => !atKill.credits.has(id) && !atKill.refunds.has(id));
  t.ok(interrupted.length > 0, `the kill interrupted transfers between debit and credit (${interrupted.length} of ${atKill.debits.size} debits)`);

  child = await startServiceProcess(app, 'all', env);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const now = await ledger();
    const open = [...now.debits.keys()].filter((id) => !now.credits.has(id) && !now.refunds.has(id));
    const orphans =
      (await Promise.all(agents.slice(0, 2).map((a) => seatHolders(app, a)))).flat().length -
      [...now.pools.values()].filter((events) =>
        events.some((e) => e.type === 'AgentFollowed' && agents.slice(0, 2).includes(agentFollowedSchema.parse(e.data).agentId)),
      ).length;
    if (open.length === 0 && orphans === 0) break;
    if (Date.now() > deadline) {
      t.fail(`after the restart, still ${open.length} unfinished transfers and ${orphans} orphan seats`);
      break;
    }
    await sleep(200);
  }

  const after = await ledger();
  t.ok(
    [...after.credits.values()].every((n) => n === 1),
    'no transfer credited twice',
  );
  t.ok(
    [...after.debits.keys()].every((id) => after.credits.has(id) !== after.refunds.has(id)),
    'every transfer is complete or compensated, never both',
  );
  for (const id of after.credits.keys()) if (!after.debits.has(id)) t.fail(`credit ${id} without a debit`);
  for (const user of users) {
    let total = START_MICRO;
    for (const [id, d] of after.debits) if (d.userId === user.userId && !after.refunds.has(id)) total -= d.amountMicro;
    for (const [poolId, events] of after.pools) {
      if (!poolId.startsWith(user.userId)) continue;
      for (const e of events.filter((x) => x.type === 'AllocationAdded')) total += allocationAddedSchema.parse(e.data).amountMicro;
    }
    if (total !== START_MICRO) t.fail(`user ${user.userId}: wallet plus pools hold ${total}, not ${START_MICRO}`);
  }
  t.pass('each user still holds exactly the starting balance across the wallet and the pools');
  const resumed = [...after.pools.values()].flat().filter((e) => e.metadata.actor === 'system:transfer-recovery' && e.type === 'AllocationAdded').length;
  t.comment(`${resumed} credits were made by the recovery worker`);
  t.ok(resumed >= interrupted.length, 'the recovery finished every transfer the kill interrupted (or a retried request did)');

  // The read model agrees with the streams after the restart: nothing applied twice by the projector.
  const sub = (user: SignedIn) => api(child, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
  for (const user of users) {
    const rows = (await sub(user)).body.data as Array<{ agent: string; allocatedUsd: number }>;
    for (const row of rows) {
      const events = after.pools.get(`${user.userId}.${row.agent}.virtual`) ?? [];
      const credited = events.filter((e) => e.type === 'AllocationAdded').reduce((s, e) => s + allocationAddedSchema.parse(e.data).amountMicro, 0);
      if (Math.round(row.allocatedUsd * 1e6) !== credited)
        t.fail(`read model of ${user.userId}/${row.agent}: ${row.allocatedUsd} USD, streams ${credited} micro-USD`);
    }
  }
  t.pass('the subscriptions read model equals the streams');
});
