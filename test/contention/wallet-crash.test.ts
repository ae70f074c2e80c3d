// Manual sells and their Idempotency-Key across real processes (`main.ts api|all`, spawned on the
// test app's database and Redis), through real HTTP. Nothing is mocked.
//
// How the SIGKILL lands between the swap and the lot update, without timing: two PostgreSQL table
// locks act as gates. `LOCK TABLE … IN EXCLUSIVE MODE` lets reads through and stops every insert.
//   1. simulated_swaps locked, then the sells sent: each records SellRequested (the events table is
//      open) and waits in PostgreSQL to insert its swap (seen in pg_locks);
//   2. the events table locked, simulated_swaps released: the swaps are made (CONFIRMED rows) and
//      the LotsSold appends wait on the events table (seen in pg_locks);
//   3. SIGKILL. A backend waiting on a lock does not notice that its client died: released, it would
//      still commit the append (the other window: appended, answer lost). So the dead process's
//      connections are ended (pg_terminate_backend) before the events table is released: nothing
//      of the lot update reached the database, exactly as when the process dies before sending it.
import { createHash } from 'node:crypto';
import pg from 'pg';
import t from 'tap';
import { walletStream } from '../../domain/wallet/state.ts';
import { RECOVERY_ACTOR } from '../../workers/transfers.ts';
import { api, startTestApp } from '../support/app.ts';
import { manyUsers, signIn, type SignedIn } from '../support/auth.ts';
import { startServiceProcess, type ServiceProcess } from '../support/process.ts';
import { until } from '../support/until.ts';

const ADMIN = 'admin@example.test';
/** The lease of a running key: short, so a replay after the crash takes the key over within the test. */
const LEASE_MS = 5000;
const SELL = { mint: 'SOL', amount: 2 };

type Answer = { status: number; body: any; headers: Headers };

t.test('manual sells: SIGKILL between the swap and the lot update, one key in parallel, a key across API processes', async (t) => {
  // The test app's own recovery waits an hour: a transfer the kill interrupts is finished by the
  // replay, or (the second sell) by the recovery worker of the process started for that.
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN, IDEMPOTENCY_LEASE_MS: String(LEASE_MS), TRANSFER_RECOVERY_GRACE_MS: '3600000' } });
  // Gates first (an append waiting at one would hold up the close), then the children, then the app.
  const gates: Array<() => Promise<void>> = [];
  const children: ServiceProcess[] = [];
  t.teardown(async () => {
    for (const release of gates) await release();
    for (const c of children) await c.stop();
    await app.close();
  });
  const { pool, store } = app.deps;
  const redisPrefix = `wcrash-${app.redisKeyPrefix.replace(/[^A-Za-z0-9]/g, '')}`;
  /** A child's environment; its PostgreSQL connections carry `name` as application_name (pg_locks, pg_terminate_backend). */
  const envOf = (name: string, extra: Record<string, string> = {}) => {
    const url = new URL(app.databaseUrl);
    url.searchParams.set('application_name', name);
    return { DATABASE_URL: url.toString(), REDIS_PREFIX: redisPrefix, IDEMPOTENCY_LEASE_MS: String(LEASE_MS), ...extra };
  };
  const spawnApi = async (name: string, role: 'api' | 'all' = 'api', extra: Record<string, string> = {}) => {
    const child = await startServiceProcess(app, role, envOf(name, extra));
    children.push(child);
    return child;
  };

  /** A transaction holding `LOCK TABLE table IN EXCLUSIVE MODE`: reads go on, inserts wait until release. */
  const closeGate = async (table: string) => {
    const client = new pg.Client({ connectionString: app.databaseUrl });
    await client.connect();
    await client.query('BEGIN');
    await client.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
    let open = false;
    const release = async () => {
      if (open) return;
      open = true;
      await client.query('COMMIT');
      await client.end();
    };
    gates.push(release);
    return { release };
  };
  /** How many connections of the process named `name` wait for a lock on `table`. */
  const waitingOn = async (name: string, table: string) =>
    (
      await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE NOT l.granted AND l.locktype = 'relation' AND l.relation = $2::regclass AND a.application_name = $1`,
        [name, table],
      )
    ).rows[0]!.n;

  const admin = await signIn(app, ADMIN);
  const prices = (p: Record<string, number>) => api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: p } });
  const sell = (on: { url: string }, u: SignedIn, body: unknown, key: string): Promise<Answer> =>
    api(on, 'POST', '/api/v1/wallet/sell', { token: u.accessToken, body, headers: { 'idempotency-key': key } });
  const buy = (u: SignedIn, amountUsd: number) => api(app, 'POST', '/api/v1/wallet/buy', { token: u.accessToken, body: { mint: 'SOL', amountUsd } });
  const wallet = async (u: SignedIn) => (await api(app, 'GET', '/api/v1/wallet', { token: u.accessToken })).body.data;
  const sol = async (u: SignedIn) => (await wallet(u)).positions.find((p: { mint: string }) => p.mint === 'SOL')?.amount ?? 0;
  const cash = async (u: SignedIn) => (await wallet(u)).wallets.find((w: { walletContext: string }) => w.walletContext === 'virtual').balanceUsd;
  const events = async (u: SignedIn, type: string) => (await store.readStream(walletStream(u.userId))).filter((e) => e.type === type);
  const sellSwaps = async (u: SignedIn) =>
    (
      await pool.query<{ swap_id: string; status: string; tx_id: string; usd_micro: string }>(
        `SELECT swap_id, status, tx_id, usd_micro FROM simulated_swaps WHERE user_id = $1 AND side = 'sell'`,
        [u.userId],
      )
    ).rows;
  /** The read model is another process's projection: waited for until it moved, then checked exactly. */
  const settledWallet = async (u: SignedIn, before: { sol: number; cash: number }) => {
    await until(`the wallet of ${u.userId} shows the sell`, async () => (await sol(u)) !== before.sol && (await cash(u)) !== before.cash, 10_000);
    return { sol: await sol(u), cash: await cash(u) };
  };

  const starting = spawnApi('wallet-crash-a'); // meanwhile, the setup
  t.equal((await prices({ SOL: 100 })).status, 200);
  const [replayed, recovered, sameKey, manyKeys, travelling] = await manyUsers(app, 'wcrash', 5);
  for (const u of [replayed!, recovered!, sameKey!, manyKeys!, travelling!]) t.equal((await buy(u, 1000)).status, 200, 'bought 10 SOL');
  t.equal((await prices({ SOL: 120 })).status, 200);
  const before = { sol: 10, cash: 9000 };
  t.same({ sol: await sol(replayed!), cash: await cash(replayed!) }, before);

  // ── 1. SIGKILL between the swap and the lot update ──────────────────────────────────────────
  const crashedKey = 'crash-replayed';
  const abandonedKey = 'crash-recovered';
  const a = await starting;
  const swapsGate = await closeGate('simulated_swaps');
  const cut = [sell(a, replayed!, SELL, crashedKey), sell(a, recovered!, SELL, abandonedKey)].map((p) =>
    p.then(
      (r) => r.status,
      () => 0,
    ),
  );
  await until(
    'both sells requested, their swaps waiting at the gate',
    async () =>
      (await events(replayed!, 'SellRequested')).length === 1 &&
      (await events(recovered!, 'SellRequested')).length === 1 &&
      (await waitingOn('wallet-crash-a', 'simulated_swaps')) === 2,
  );
  const eventsGate = await closeGate('events');
  await swapsGate.release();
  await until('both swaps CONFIRMED, a lot update waiting on the events table', async () => {
    const made = [...(await sellSwaps(replayed!)), ...(await sellSwaps(recovered!))];
    return made.length === 2 && made.every((s) => s.status === 'CONFIRMED') && (await waitingOn('wallet-crash-a', 'events')) >= 1;
  });
  a.child.kill('SIGKILL');
  await a.exited;
  // Its idle connections closed with it; the one waiting on the lock is still there, unaware.
  const left = await pool.query<{ pid: number; waiting: boolean }>(
    `SELECT pid, wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE application_name = 'wallet-crash-a' AND backend_type = 'client backend'`,
  );
  t.ok(
    left.rows.some((r) => r.waiting),
    "the dead process's append still waits in PostgreSQL",
  );
  const waiting = left.rows.filter((r) => r.waiting).map((r) => r.pid);
  const ended = await pool.query<{ gone: boolean }>('SELECT pg_terminate_backend(pid, 5000) AS gone FROM unnest($1::int[]) AS pid', [waiting]);
  t.ok(
    ended.rows.every((r) => r.gone),
    'ended: its append rolled back, never committed',
  );
  await eventsGate.release();
  t.same(await Promise.all(cut), [0, 0], 'neither request was answered: the process died');
  t.same(
    [await events(replayed!, 'LotsSold'), await events(recovered!, 'LotsSold')].map((e) => e.length),
    [0, 0],
    'killed after the swaps, before the lot updates',
  );

  await t.test('the killed sell, replayed with its key: 409 while the lease runs, then the first result, once', async (t) => {
    const [requested] = await events(replayed!, 'SellRequested');
    const transferId = (requested!.data as { transfer: { transferId: string } }).transfer.transferId;
    const early = await sell(app, replayed!, SELL, crashedKey);
    t.equal(early.status, 409, 'the dead request still holds the lease');
    t.equal(early.body.error.code, 'TRADE_IN_PROGRESS');

    const b = await spawnApi('wallet-crash-b');
    const keyHash = createHash('sha256').update(crashedKey).digest('hex');
    await until(
      'the lease lapsed',
      async () =>
        (await pool.query(`SELECT 1 FROM idempotency_keys WHERE user_id = $1 AND key_hash = $2 AND lease_until <= now()`, [replayed!.userId, keyHash]))
          .rowCount === 1,
    );
    const first = await sell(b, replayed!, SELL, crashedKey);
    t.equal(first.status, 200, JSON.stringify(first.body));
    t.equal(first.headers.get('idempotent-replayed'), null, 'the restarted process ran the request again');
    const [swap] = await sellSwaps(replayed!);
    t.match(first.body.data, {
      success: true,
      side: 'sell',
      mint: 'SOL',
      amount: 2,
      priceUsd: 120,
      amountUsd: 240,
      tradeId: transferId,
      transactionId: swap!.tx_id,
    });
    for (const on of [b, app]) {
      const again = await sell(on, replayed!, SELL, crashedKey);
      t.equal(again.status, 200);
      t.equal(again.headers.get('idempotent-replayed'), 'true');
      t.same(again.body, first.body, 'the identical envelope');
    }

    t.equal((await events(replayed!, 'SellRequested')).length, 1, 'one SellRequested');
    const sold = await events(replayed!, 'LotsSold');
    t.equal(sold.length, 1, 'one LotsSold');
    t.equal((sold[0]!.data as { transferId: string }).transferId, transferId);
    t.equal(sold[0]!.metadata.actor, replayed!.userId, 'recorded by the replay, not the recovery worker');
    t.same(
      (await sellSwaps(replayed!)).map((s) => [s.swap_id, s.status]),
      [[transferId, 'CONFIRMED']],
      'one swap at the venue',
    );
    t.same(await settledWallet(replayed!, before), { sol: 8, cash: 9240 }, 'the lots reduced once, the cash credited once');

    await t.test('one Idempotency-Key, 20 parallel sells over two processes: exactly one sell', async (t) => {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => sell(i % 2 ? b : app, sameKey!, { mint: 'SOL', amount: 1 }, 'twenty-at-once')));
      const ok = answers.filter((r) => r.status === 200);
      const busy = answers.filter((r) => r.status === 409);
      t.equal(ok.length + busy.length, 20, `every answer is 200 or 409: ${answers.map((r) => r.status).join(' ')}`);
      t.ok(
        busy.every((r) => r.body.error.code === 'TRADE_IN_PROGRESS'),
        '409s are TRADE_IN_PROGRESS',
      );
      t.equal(ok.filter((r) => r.headers.get('idempotent-replayed') === null).length, 1, 'one request ran; any other 200 is a replay');
      t.ok(
        ok.every((r) => JSON.stringify(r.body) === JSON.stringify(ok[0]!.body)),
        'every 200 is the same envelope',
      );
      t.comment(`${ok.length} × 200, ${busy.length} × 409`);
      const later = await sell(b, sameKey!, { mint: 'SOL', amount: 1 }, 'twenty-at-once');
      t.equal(later.status, 200);
      t.equal(later.headers.get('idempotent-replayed'), 'true');
      t.same(later.body, ok[0]!.body, 'a repeat afterwards answers the envelope');
      t.equal((await sellSwaps(sameKey!)).length, 1, 'one sell at the venue');
      t.equal((await events(sameKey!, 'LotsSold')).length, 1, 'one LotsSold');
      t.same(await settledWallet(sameKey!, before), { sol: 9, cash: 9120 });
    });

    await t.test('20 keys, 20 parallel sells over two processes: one sell, 19 TRADE_IN_PROGRESS; the lots add up', async (t) => {
      // The first sell to take the wallet's trade lock waits at the venue (the swaps gate) until
      // every other request answered: the lock decides, not the timing.
      const gate = await closeGate('simulated_swaps');
      const answers = Array.from({ length: 20 }, (_, i) => sell(i % 2 ? b : app, manyKeys!, { mint: 'SOL', amount: 1 }, `key-${i}`));
      const settled: Answer[] = [];
      for (const p of answers) void p.then((r) => settled.push(r));
      await until('19 answers while the first sell waits at the venue', async () => settled.length >= 19);
      t.equal(settled.length, 19);
      await gate.release();
      const all = await Promise.all(answers);
      t.same(all.map((r) => r.status).sort(), [200, ...Array(19).fill(409)]);
      t.ok(
        all.filter((r) => r.status === 409).every((r) => r.body.error.code === 'TRADE_IN_PROGRESS'),
        '409s are TRADE_IN_PROGRESS',
      );
      t.equal((await sellSwaps(manyKeys!)).length, 1, 'one sell at the venue');
      t.equal((await events(manyKeys!, 'LotsSold')).length, 1, 'one LotsSold');
      const now = await settledWallet(manyKeys!, before);
      t.same(now, { sol: 9, cash: 9120 }, 'the lots add up: 10 bought, 1 sold, 120 USD credited');
      t.equal((await buy(manyKeys!, 120)).status, 200, 'the lock was released');
    });

    await t.test('an Idempotency-Key survives a restart of the API and works across API processes', async (t) => {
      const key = 'travelling-key';
      const first = await sell(app, travelling!, SELL, key);
      t.equal(first.status, 200, JSON.stringify(first.body));
      const onB = await sell(b, travelling!, SELL, key);
      t.equal(onB.headers.get('idempotent-replayed'), 'true', 'another process answers it');
      t.same([onB.status, onB.body], [200, first.body]);
      await b.stop();
      // The process started now also runs the workers with a short recovery grace (for the next test).
      const c = await spawnApi('wallet-crash-c', 'all', { TRANSFER_RECOVERY_GRACE_MS: '500', TRANSFER_RECOVERY_INTERVAL_MS: '200' });
      const onC = await sell(c, travelling!, SELL, key);
      t.equal(onC.headers.get('idempotent-replayed'), 'true', 'a process started after the stop answers it');
      t.same([onC.status, onC.body], [200, first.body]);
      t.equal((await sellSwaps(travelling!)).length, 1, 'sold once');
      t.equal((await events(travelling!, 'LotsSold')).length, 1);
    });
  });

  await t.test('the killed sell nobody replays: the recovery worker finishes it, once', async (t) => {
    const c = children.at(-1)!;
    await until('the recovery worker sold the lots', async () => (await events(recovered!, 'LotsSold')).length > 0, 15_000);
    const [requested] = await events(recovered!, 'SellRequested');
    const transferId = (requested!.data as { transfer: { transferId: string } }).transfer.transferId;
    const sold = await events(recovered!, 'LotsSold');
    t.equal(sold.length, 1, 'one LotsSold');
    t.equal((sold[0]!.data as { transferId: string }).transferId, transferId);
    t.equal(sold[0]!.metadata.actor, RECOVERY_ACTOR);
    t.equal((await events(recovered!, 'SellRequested')).length, 1, 'one SellRequested');
    t.same(
      (await sellSwaps(recovered!)).map((s) => [s.swap_id, s.status]),
      [[transferId, 'CONFIRMED']],
      'one swap at the venue',
    );
    t.same(await settledWallet(recovered!, before), { sol: 8, cash: 9240 }, 'the lots reduced once, the cash credited once');
    // The key's lease lapsed long ago: a late replay takes it over and answers the finished sell.
    const late = await sell(c, recovered!, SELL, abandonedKey);
    t.equal(late.status, 200, JSON.stringify(late.body));
    t.match(late.body.data, { side: 'sell', amount: 2, amountUsd: 240, tradeId: transferId });
    t.equal((await events(recovered!, 'LotsSold')).length, 1, 'still one LotsSold');
    t.equal((await sell(c, recovered!, { mint: 'SOL', amount: 1 }, 'after-recovery')).status, 200, 'the trade lock was released');
  });
});
