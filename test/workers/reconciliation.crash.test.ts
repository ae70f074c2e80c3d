// The reconciliation worker killed (SIGKILL) between a venue call and its append, then restarted:
// exactly one effect. The worker runs as its own OS process (`main.ts workers`) against the venue
// served over HTTP by this test (VENUE_URL), so the venue outlives the worker as a real one does;
// the venue kills the worker right after a call took effect and before the answer reaches it.
import type { ChildProcess } from 'node:child_process';
import t from 'tap';
import { until } from '../support/until.ts';
import { poolId } from '../../domain/pool/state.ts';
import { serveVenues } from '../../infra/venues/remote.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { spawnServiceProcess, type SpawnedProcess } from '../support/process.ts';
import { CHAIN_MS, simulated } from '../infra/venues/fixtures.ts';

t.test('a worker killed between the venue call and the append: after restart, exactly one effect', async (t) => {
  const { clock, venues } = simulated();
  /** the call to die after: the venue takes effect, then the worker is killed before it hears back */
  let dieAfter: ((call: { method: string; result: unknown }) => boolean) | null = null;
  let worker: ChildProcess | null = null;
  const killed: string[] = [];
  const server = await serveVenues(venues, {
    onCall: (call) => {
      if (dieAfter?.(call) && worker) {
        killed.push(`${call.method} → ${(call.result as { status?: string } | null)?.status}`);
        dieAfter = null;
        worker.kill('SIGKILL');
      }
    },
  });
  t.teardown(() => server.close());
  // The test app's own reconciliation sweeps once at start (nothing to do yet) and then not for an
  // hour: the worker process below is the one that meets the legs.
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test', RECONCILIATION_INTERVAL_MS: '3600000' } });
  t.teardown(() => app.close());
  const env = {
    VENUE_URL: server.url,
    RECONCILIATION_INTERVAL_MS: '100',
    REDIS_PREFIX: `recon-${app.redisKeyPrefix.replace(/[^A-Za-z0-9]/g, '')}`,
  };
  // The kill's target is the child as soon as it is spawned: under load a worker can reach the
  // venue before the test has read its start line (or even be killed before it printed it), and a
  // kill aimed at the previous (dead) process would let the call meant to kill it through.
  const startWorker = (): SpawnedProcess => {
    const p = spawnServiceProcess(app, 'workers', env);
    worker = p.child;
    return p;
  };
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  const user = await signIn(app, 'crashed@example.test');
  const spot = await followableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    { name: 'Crash Spot', venue: 'SPOT_VENUE', minAllocationUsd: 10 },
    { live: true },
  );
  const id = poolId(user.userId, spot, 'real');
  await api(app, 'POST', `/api/admin/wallets/${user.userId}/deposit`, { token: admin.accessToken, body: { amountUsd: 1000 } });
  const followed = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
    token: user.accessToken,
    body: { agentId: spot, walletContext: 'real', allocationAmountUsd: 300 },
  });
  t.equal(followed.status, 200);
  const addId = `${id}#add-1`;
  const poolEvents = async (type: string) => (await app.deps.store.readStream(`pool-${id}`)).filter((e) => e.type === type);
  const walletEvents = async (type: string) => (await app.deps.store.readStream(`wallet-${user.userId}`)).filter((e) => e.type === type);

  // 1. Killed right after the chain transfer was submitted: the venue has it, the ledger does not know.
  dieAfter = (c) => c.method === 'submit';
  let p = startWorker();
  await p.exited;
  t.same(killed, ['submit → PENDING']);
  t.equal((await venues.spot.chain.status(addId))?.status, 'PENDING', 'the venue took the submission');

  // 2. Restarted, then killed right after the venue answered CONFIRMED, before SettleTransfer.
  clock.advance(CHAIN_MS);
  dieAfter = (c) => c.method === 'status' && (c.result as { status?: string } | null)?.status === 'CONFIRMED';
  p = startWorker();
  await p.exited;
  t.same(killed.at(-1), 'status → CONFIRMED');
  t.same(await poolEvents('AllocationSettled'), [], 'killed before the append');

  // 3. Restarted without a kill: the add settles once, and the venue holds the deposit once.
  p = startWorker();
  t.teardown(() => p.stop());
  await until('the add settled', async () => (await poolEvents('AllocationSettled')).length > 0);
  const equity = (await venues.spot.account.poolFigures(id)).equityMicro;
  t.equal(equity, 300_000_000, 'the venue moved the deposit once');

  // 4. A withdrawal: killed after the chain confirmed it, restarted, credited to the wallet once.
  const out = await api(app, 'POST', `/api/v1/users/me/subscriptions/${spot}/allocation/withdraw`, {
    token: user.accessToken,
    body: { amountUsd: 120, walletContext: 'real' },
  });
  t.equal(out.status, 200);
  await until('the withdrawal submitted', async () => {
    const legs = (await poolEvents('WithdrawalRequested')).map((e) => (e.data as { transfer: { transferId: string } }).transfer.transferId);
    return legs.length > 0 && (await venues.spot.chain.status(legs[0]!)) !== null;
  });
  await p.stop();
  clock.advance(CHAIN_MS);
  dieAfter = (c) => c.method === 'status' && (c.result as { status?: string } | null)?.status === 'CONFIRMED';
  p = startWorker();
  await p.exited;
  t.same(await walletEvents('WalletCredited'), [], 'killed before the credit');
  p = startWorker();
  await until('credited', async () => (await walletEvents('WalletCredited')).length > 0);
  await new Promise((r) => setTimeout(r, 500)); // later sweeps change nothing more
  t.equal((await walletEvents('WalletCredited')).length, 1, 'credited exactly once');
  t.equal((await poolEvents('AllocationSettled')).length, 2, 'one settlement per leg');
  t.equal((await venues.spot.account.poolFigures(id)).equityMicro, 180_000_000, 'the venue paid out once');
  // The credit was appended by the worker process: this process's read model sees it once its
  // projector has caught up (an eventually consistent read, so waited for, then checked exact).
  const realBalance = async () =>
    (await api(app, 'GET', '/api/v1/wallet', { token: user.accessToken })).body.data.wallets.find((w: { walletContext: string }) => w.walletContext === 'real')
      .balanceUsd;
  await until('the wallet read model shows the credit', async () => (await realBalance()) !== 700);
  t.equal(await realBalance(), 700 + 120);
  await p.stop();
});
