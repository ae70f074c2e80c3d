// npm run audit (scripts/audit.ts) as a child process against a real database prepared by the test
// app, on PostgreSQL and on EventStoreDB (the protocol-level peer): verify exits 0 on a clean read
// model and 1 naming a tampered column; ledger prints a pool's history as a table.
import { spawn } from 'node:child_process';
import type { Test } from 'tap';
import { startTestApp, type TestApp } from '../support/app.ts';
import { poolFlows } from '../support/pool-flows.ts';

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The script in its own process (asynchronously: the test app keeps serving its projector meanwhile). */
function audit(app: TestApp, ...args: string[]): Promise<Ran> {
  const { EVENT_STORE, EVENTSTORE_URL } = app.deps.config;
  const child = spawn(process.execPath, ['--import=tsx', 'scripts/audit.ts', ...args], {
    env: { ...process.env, DATABASE_URL: app.databaseUrl, LOG_LEVEL: 'silent', EVENT_STORE, ...(EVENTSTORE_URL ? { EVENTSTORE_URL } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

/** The suite on one store; audit.postgres.test.ts and audit.esdb.test.ts run it, in parallel files. */
export function auditSuite(t: Test, eventStore: 'postgres' | 'esdb') {
  t.test(`npm run audit on ${eventStore}`, async (t) => {
    const app = await startTestApp({ eventStore, config: { ADMIN_EMAILS: 'admin@example.test' } });
    t.teardown(() => app.close());
    const { users, spotAgent, perpAgent, pools } = await poolFlows(app);

    await t.test('verify: a clean read model exits 0', async (t) => {
      // Read-only runs are independent processes: run side by side.
      const [run, quiet] = await Promise.all([audit(app, 'verify', '--progress'), audit(app, 'verify')]);
      t.equal(run.status, 0, run.stdout + run.stderr);
      t.match(
        run.stdout,
        /^verified 4 pools from \d+ events in [\d.]+ s \(\d+ events\/s\): 4 match, 0 different, 0 missing rows, 0 orphan rows\n(verified the fees of \d+ pools and 0 claims: (\d+) match, 0 different, 0 paid, 0 in flight, 0 wrongly credited\n)$/,
      );
      t.match(run.stderr, /replay \|[█░]+\| \d+\/\d+ events/, '--progress draws the bar on stderr');
      t.equal(quiet.status, 0);
      t.equal(quiet.stderr, '', 'no bar when stderr is not a terminal');
    });

    await t.test('verify: a fee figure of the dashboard that its events do not give exits 1 and names the column', async (t) => {
      await app.deps.pool.query('UPDATE agent_subscribers SET creator_claimed_micro = 1 WHERE pool_id = $1', [pools.real]);
      const run = await audit(app, 'verify');
      t.equal(run.status, 1, run.stderr);
      t.match(run.stdout, `DIFFERENT fees ${pools.real}\n  creator_claimed_micro: ledger 0, read model 1\n`);
      t.match(run.stdout, /4 match, 0 different/, 'the pools themselves still match');
      await app.deps.pool.query('UPDATE agent_subscribers SET creator_claimed_micro = 0 WHERE pool_id = $1', [pools.real]);
    });

    await t.test('verify: a tampered row exits 1 and names the column', async (t) => {
      await app.deps.pool.query('UPDATE subscriptions SET realized_micro = realized_micro - 1 WHERE pool_id = $1', [pools.trading]);
      await app.deps.pool.query('UPDATE subscriptions SET followed = true WHERE pool_id = $1', [pools.stopped]);
      const run = await audit(app, 'verify');
      t.equal(run.status, 1, run.stderr);
      t.match(run.stdout, `DIFFERENT ${pools.trading} (9 events)\n  realized_micro: ledger 9999999, read model 9999998\n`);
      t.match(run.stdout, `DIFFERENT ${pools.stopped} (6 events)\n  followed: ledger false, read model true\n`);
      t.match(run.stdout, /2 match, 2 different/);
      await app.deps.pool.query('DELETE FROM subscriptions WHERE pool_id = $1', [pools.real]);
      const missing = await audit(app, 'verify');
      t.equal(missing.status, 1);
      t.match(missing.stdout, `MISSING_ROW ${pools.real} (`);
    });

    await t.test('ledger: one pool as a table, by user id or email, as of a time', async (t) => {
      const [run, byEmail, real] = await Promise.all([
        audit(app, 'ledger', '--user', users[0]!.userId, '--agent', spotAgent),
        audit(app, 'ledger', '--user', 'flow-user1@example.test', '--agent', spotAgent, '--at', '2000-01-01T00:00:00Z'),
        audit(app, 'ledger', '--user', users[2]!.userId, '--agent', perpAgent, '--context', 'real'),
      ]);
      t.equal(run.status, 0, run.stderr);
      const lines = run.stdout.trimEnd().split('\n');
      t.equal(lines[0], `pool ${pools.trading}: 9 of 9 events`);
      t.match(lines[1], /^#\s+time\s+type\s+amounts\s+allocatedUsd\s+currentBalanceUsd\s+withdrawableUsd\s+pendingDeltaUsd$/);
      t.same(
        lines.slice(2, 11).map((l) => l.split(/\s+/)[2]),
        [
          'AgentFollowed',
          'AllocationAdded',
          'AllocationAdded',
          'TradeOpened',
          'TradeMarked',
          'TradeClosed',
          'TradeOpened',
          'WithdrawalRequested',
          'FollowSettingsUpdated',
        ],
      );
      t.match(lines[7], /TradeClosed\s+realizedPnlUsd=9\.999999\s+150\.000000\s+159\.999999\s+/);
      t.match(lines[9], /WithdrawalRequested\s+amountUsd=30\.000000\s+120\.000000\s+129\.999999\s+/);
      t.equal(lines[11], 'followed, allocatedUsd 120.000000');
      t.equal(byEmail.status, 0, byEmail.stderr);
      t.match(byEmail.stdout, `pool ${pools.trading}: 0 of 9 events as of 2000-01-01T00:00:00.000Z\n`);
      t.match(byEmail.stdout, /not followed\n$/);
      t.match(real.stdout, /AllocationPending\s+amountUsd=300\.000000\s+0\.000000\s+0\.000000\s+0\.000000\s+300\.000000/, 'pending at the venue');
    });

    await t.test('usage errors exit 2; a pool never followed exits 1', async (t) => {
      const [unknown, noAgent, paper, soon, never] = await Promise.all([
        audit(app, 'frobnicate'),
        audit(app, 'ledger', '--user', users[0]!.userId),
        audit(app, 'ledger', '--user', users[0]!.userId, '--agent', spotAgent, '--context', 'paper'),
        audit(app, 'ledger', '--user', users[0]!.userId, '--agent', spotAgent, '--at', 'soon'),
        audit(app, 'ledger', '--user', users[0]!.userId, '--agent', perpAgent),
      ]);
      t.equal(unknown.status, 2);
      t.equal(noAgent.status, 2);
      t.equal(paper.status, 2);
      t.equal(soon.status, 2);
      t.equal(never.status, 1);
      t.match(never.stderr, /never followed this agent in the virtual context/);
    });
  });
}
