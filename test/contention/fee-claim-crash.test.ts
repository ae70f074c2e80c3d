// A fee claim cut by SIGKILL between its debit (the fee account's FeesClaimed) and its credit (the
// developer's WalletCredited), across real processes (`main.ts api` for the request, `main.ts
// workers` for the recovery) on the test app's database and Redis. Nothing is mocked.
//
// How the kill lands between the two appends, without timing: a transaction of the test holds an
// uncommitted row at the developer's wallet stream's next revision, so the credit's append waits on
// the unique (stream, revision) index while every other stream is written freely. Once the debit is
// in and the credit waits (pg_stat_activity), the process is killed, its waiting connection ended
// (a backend waiting on a lock does not notice its client died: released, it would still commit),
// and the gate rolled back: the credit never reached the database.
import pg from 'pg';
import t from 'tap';
import { feeAccountStream } from '../../domain/fees/state.ts';
import { walletStream } from '../../domain/wallet/state.ts';
import { RECOVERY_ACTOR } from '../../workers/transfers.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { earnFees } from '../support/fees.ts';
import { startServiceProcess, type ServiceProcess } from '../support/process.ts';
import { until } from '../support/until.ts';

const ADMIN = 'admin@example.test';
const LEASE_MS = 3000;
const M = 1_000_000;

t.test('SIGKILL between a fee claim’s debit and its credit: the recovery pays it exactly once', async (t) => {
  // The test app's own recovery waits an hour: the workers process started after the kill finishes the claim.
  const app = await startTestApp({
    config: {
      ADMIN_EMAILS: ADMIN,
      VENUE_SIM_CHAIN_MS: '0',
      RECONCILIATION_INTERVAL_MS: '100',
      TRANSFER_RECOVERY_GRACE_MS: '3600000',
      IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
    },
  });
  let gate: pg.Client | null = null;
  const children: ServiceProcess[] = [];
  t.teardown(async () => {
    if (gate) await gate.end();
    for (const c of children) await c.stop();
    await app.close();
  });
  const { pool } = app.deps;
  const redisPrefix = `feecrash-${app.redisKeyPrefix.replace(/[^A-Za-z0-9]/g, '')}`;
  const spawn = async (name: string, role: 'api' | 'workers', extra: Record<string, string> = {}) => {
    const url = new URL(app.databaseUrl);
    url.searchParams.set('application_name', name);
    const child = await startServiceProcess(app, role, {
      DATABASE_URL: url.toString(),
      REDIS_PREFIX: redisPrefix,
      IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
      ...extra,
    });
    children.push(child);
    return child;
  };

  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'feecrash-dev@example.test');
  const follower = await signIn(app, 'feecrash-u1@example.test');
  const agentId = await followableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    { name: 'Crash fees', venue: 'SPOT_VENUE', successFeePercent: 20 },
    { live: true },
  );
  const earned = await earnFees(app, admin, follower, agentId, 50, 'crash-1');
  t.equal(earned.earnedMicro, 8 * M);

  /** Rows of the events table, counted straight in SQL (a reader of the global log would wait behind the gate). */
  const count = async (stream: string, type: string) =>
    (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE stream_name = $1 AND event_type = $2', [stream, type])).rows[0]!.n;
  const claims = () => count(feeAccountStream(agentId), 'FeesClaimed');
  const credits = () => count(walletStream(dev.userId), 'WalletCredited');
  const waiting = async (name: string) =>
    (await pool.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [name])).rows.map(
      (r) => r.pid,
    );

  const a = await spawn('feecrash-a', 'api');
  const revision = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE stream_name = $1', [walletStream(dev.userId)])).rows[0]!.n;
  gate = new pg.Client({ connectionString: app.databaseUrl });
  await gate.connect();
  await gate.query('BEGIN');
  await gate.query(`INSERT INTO events (stream_name, revision, event_id, event_type, data, metadata) VALUES ($1, $2, gen_random_uuid(), 'Gate', '{}', '{}')`, [
    walletStream(dev.userId),
    revision,
  ]);
  const key = { 'idempotency-key': 'crash-claim' };
  const cut = api(a, 'POST', `/api/v1/developers/agents/${agentId}/fees/claim`, { token: dev.accessToken, headers: key }).then(
    (r) => r.status,
    () => 0,
  );
  await until('the claim debited, its credit waiting at the gate', async () => (await claims()) === 1 && (await waiting('feecrash-a')).length > 0);
  a.child.kill('SIGKILL');
  await a.exited;
  const ended = await pool.query<{ gone: boolean }>('SELECT pg_terminate_backend(pid, 5000) AS gone FROM unnest($1::int[]) AS pid', [
    await waiting('feecrash-a'),
  ]);
  t.ok(ended.rows.length > 0 && ended.rows.every((r) => r.gone), 'the dead process’s append ended, never committed');
  await gate.query('ROLLBACK');
  await gate.end();
  gate = null;
  t.equal(await cut, 0, 'the request was never answered: the process died');
  t.same([await claims(), await credits()], [1, 0], 'killed after the debit, before the credit');

  await t.test('the recovery worker credits the claim once', async (t) => {
    await spawn('feecrash-w', 'workers', { TRANSFER_RECOVERY_GRACE_MS: '1000', TRANSFER_RECOVERY_INTERVAL_MS: '200' });
    await until('the recovery credited the claim', async () => (await credits()) === 1);
    const [credit] = (await app.deps.store.readStream(walletStream(dev.userId))).filter((e) => e.type === 'WalletCredited');
    t.match(credit, { metadata: { actor: RECOVERY_ACTOR }, data: { walletContext: 'real', amountMicro: 8 * M, from: `fees:${agentId}` } });
    const wallet = await until('the wallet read model shows it', async () => {
      const real = (await api(app, 'GET', '/api/v1/wallet', { token: dev.accessToken })).body.data.wallets.find(
        (w: { walletContext: string }) => w.walletContext === 'real',
      );
      return real.balanceUsd === 8 ? real : false;
    });
    t.equal(wallet.balanceUsd, 8);
    const [item] = (await api(app, 'GET', `/api/v1/developers/agents/${agentId}/subscribers`, { token: dev.accessToken })).body.data.items;
    t.match(item, { totalFeesEarnedUsd: 8, totalFeesClaimedUsd: 8, claimableFeesUsd: 0 });
  });

  await t.test('the killed request replayed with its key answers the claim, and pays nothing more', async (t) => {
    await until(
      'the lease lapsed',
      async () => (await pool.query('SELECT 1 FROM idempotency_keys WHERE user_id = $1 AND lease_until <= now()', [dev.userId])).rowCount === 1,
    );
    const replay = await api(app, 'POST', `/api/v1/developers/agents/${agentId}/fees/claim`, { token: dev.accessToken, headers: key });
    t.equal(replay.status, 200, JSON.stringify(replay.body));
    t.match(replay.body.data, { claimedUsd: 8, claimableFeesUsd: 0, totalFeesClaimedUsd: 8 });
    t.same([await claims(), await credits()], [1, 1], 'one debit, one credit');
    await new Promise((r) => setTimeout(r, 1500)); // a few more recovery sweeps
    t.same([await claims(), await credits()], [1, 1], 'still once after more sweeps');
  });
});
