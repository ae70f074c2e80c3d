// GET /api/v1/users/me/subscriptions/{agentId}/fee-receipts through real HTTP, on both event stores:
// a real pool settles its success fee on two confirmed withdrawals and on the stop, and each
// settlement's receipt checks out against the fee rules (docs/domain-rules.md, "Pool ledger") and
// matches the FeesSettled line of the pool's ledger. Fees are settled by the real routes, the
// reconciliation worker and the simulated venue.
import t from 'tap';
import { poolId } from '../../domain/pool/state.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';
import { api, dispatch, startTestApp, type TestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { until } from '../support/until.ts';

const SUBS = '/api/v1/users/me/subscriptions';
const M = 1_000_000;
const RATE = 20;

interface Receipt {
  sequence: number;
  eventId: string;
  globalPosition: { commit: string; prepare: string } | null;
  settledAt: string;
  trigger: string;
  triggerTransferId: string | null;
  successFeePercent: number;
  chargeableProfitUsd: number;
  highWaterMarkBeforeUsd: number;
  highWaterMarkAfterUsd: number;
  feesChargedBeforeUsd: number;
  feesChargedAfterUsd: number;
  feeDueUsd: number;
  feeUsd: number;
  creatorFeeUsd: number;
  platformFeeUsd: number;
}

/** RATE % of a profit in micro-USD, floored in the user's favour (docs/domain-rules.md, "Pool ledger"). */
const rateOf = (profitMicro: number) => Number((BigInt(profitMicro) * BigInt(RATE)) / 100n);

async function ok(app: TestApp, method: string, path: string, token: string, body?: unknown) {
  const res = await api(app, method, path, { token, ...(body === undefined ? {} : { body }) });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** A closed trade of `pnlUsd` in the pool, through the pool's own command. */
async function trade(app: TestApp, pool: string, tradeId: string, pnlMicro: number) {
  await dispatch(app, 'RecordPoolFact', { poolId: pool, fact: { type: 'OpenTrade', data: oneTrade(tradeId, 50 * M) } });
  await dispatch(app, 'RecordPoolFact', { poolId: pool, fact: { type: 'CloseTrade', data: { tradeId, realizedPnlMicro: pnlMicro } } });
}

for (const eventStore of ['postgres', 'esdb'] as const) {
  t.test(`fee receipts (${eventStore}): every settlement's profit, high-water mark, rate and split, newest first`, async (t) => {
    const app = await startTestApp({ eventStore, config: { ADMIN_EMAILS: 'admin@example.test', VENUE_SIM_CHAIN_MS: '0', RECONCILIATION_INTERVAL_MS: '100' } });
    t.teardown(() => app.close());
    const [admin, dev, user, other] = (await Promise.all(
      ['admin', 'receipts-dev', 'receipts-user', 'receipts-other'].map((n) => signIn(app, `${n}@example.test`)),
    )) as [SignedIn, SignedIn, SignedIn, SignedIn];
    const tokens = { developer: dev.accessToken, admin: admin.accessToken };
    const agentId = await followableAgent(app, tokens, { name: 'Receipts', venue: 'SPOT_VENUE', successFeePercent: RATE }, { live: true });
    const pool = poolId(user.userId, agentId, 'real');
    const receipts = (query = '', token = user.accessToken) => api(app, 'GET', `${SUBS}/${agentId}/fee-receipts?walletContext=real${query}`, { token });
    const settled = (count: number) => until(`${count} fee settlements`, async () => (await receipts()).body.data?.pagination.total === count);
    const withdraw = (amountUsd: number) => ok(app, 'POST', `${SUBS}/${agentId}/allocation/withdraw`, user.accessToken, { amountUsd, walletContext: 'real' });

    await ok(app, 'POST', `/api/admin/wallets/${user.userId}/deposit`, admin.accessToken, { amountUsd: 300 });
    await ok(app, 'POST', SUBS, user.accessToken, { agentId, walletContext: 'real', allocationAmountUsd: 300 });
    await until('the real add confirmed', async () => {
      const rows = (await ok(app, 'GET', `${SUBS}?walletContext=real`, user.accessToken)) as Array<{ agent: string; allocatedUsd: number }>;
      return rows.find((r) => r.agent === agentId)?.allocatedUsd === 300;
    });
    // 33.333333 USD of profit, settled on a withdrawal: 6.666666 USD of fee (floored).
    await trade(app, pool, 'r-1', 33_333_333);
    await withdraw(20);
    await settled(1);
    const afterFirst = new Date().toISOString();
    // A loss below the mark, then a gain past it: only the profit above 33.333333 is charged.
    await trade(app, pool, 'r-2', -13_333_333);
    await trade(app, pool, 'r-3', 20_000_000);
    await withdraw(10);
    await settled(2);
    await trade(app, pool, 'r-4', 10_000_000);
    await ok(app, 'DELETE', `${SUBS}/${agentId}?walletContext=real`, user.accessToken);
    await settled(3);

    const res = await receipts();
    t.equal(res.status, 200);
    const items = res.body.data.items as Receipt[];

    await t.test('newest first; each triggered by what set it off', async (t) => {
      t.same(
        items.map((r) => r.trigger),
        ['stop', 'withdrawal', 'withdrawal'],
      );
      t.ok(items.every((r) => r.triggerTransferId && r.eventId && r.globalPosition && r.successFeePercent === RATE));
      t.ok(items[0]!.sequence > items[1]!.sequence && items[1]!.sequence > items[2]!.sequence);
      t.same(
        items.map((r) => r.chargeableProfitUsd),
        [50, 40, 33.333333],
      );
    });

    await t.test('fee = rate × profit above the mark, floored; the parts add up to it; the mark only rises', async (t) => {
      const oldest = [...items].reverse();
      let mark = 0;
      let charged = 0;
      for (const r of oldest) {
        const profit = usdToMicro(r.chargeableProfitUsd);
        t.equal(usdToMicro(r.highWaterMarkBeforeUsd), mark, 'the mark before is the last one after');
        t.equal(usdToMicro(r.feesChargedBeforeUsd), charged, 'what was charged before');
        t.equal(charged, rateOf(mark), 'what was charged is the rate of the mark');
        t.equal(usdToMicro(r.feeDueUsd), rateOf(profit) - rateOf(mark), 'due: the rate of the profit above the mark');
        t.equal(r.feeUsd, r.feeDueUsd, 'settled in full (the pool had it free)');
        t.equal(usdToMicro(r.creatorFeeUsd) + usdToMicro(r.platformFeeUsd), usdToMicro(r.feeUsd), 'creator + platform = fee');
        t.equal(usdToMicro(r.creatorFeeUsd), Math.floor((usdToMicro(r.feeUsd) * 4) / 5), 'the creator: 80 %, floored');
        t.equal(usdToMicro(r.highWaterMarkAfterUsd), Math.max(mark, profit), 'the mark after: the higher of the mark and the profit');
        t.equal(usdToMicro(r.feesChargedAfterUsd), charged + usdToMicro(r.feeUsd));
        mark = usdToMicro(r.highWaterMarkAfterUsd);
        charged = usdToMicro(r.feesChargedAfterUsd);
      }
      t.same(
        oldest.map((r) => r.feeUsd),
        [6.666666, 1.333334, 2],
      );
      t.same(
        oldest.map((r) => [r.creatorFeeUsd, r.platformFeeUsd]),
        [
          [5.333332, 1.333334],
          [1.066667, 0.266667],
          [1.6, 0.4],
        ],
      );
    });

    await t.test("the ledger's FeesSettled lines carry the same receipt beside their amounts", async (t) => {
      const ledger = await ok(app, 'GET', `${SUBS}/${agentId}/ledger?walletContext=real&limit=100`, user.accessToken);
      type Line = { type: string; eventId: string; sequence: number; amounts: Record<string, number>; feeReceipt?: Receipt };
      const lines = (ledger.items as Line[]).filter((l) => l.type === 'FeesSettled');
      t.same(lines.map((l) => l.feeReceipt).reverse(), items);
      for (const l of lines) {
        t.equal(l.feeReceipt!.eventId, l.eventId);
        t.equal(l.feeReceipt!.sequence, l.sequence);
        t.same(l.amounts, { feeUsd: l.feeReceipt!.feeUsd, platformFeeUsd: l.feeReceipt!.platformFeeUsd, creatorFeeUsd: l.feeReceipt!.creatorFeeUsd });
      }
      t.equal(ledger.items.filter((l: { feeReceipt?: unknown }) => l.feeReceipt).length, 3, 'no other line has one');
    });

    await t.test('pages, and `at` replays to a point in time', async (t) => {
      const first = (await receipts('&limit=2')).body.data;
      t.same(first.items, items.slice(0, 2));
      t.match(first.pagination, { total: 3, page: 1, limit: 2, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
      const second = (await receipts('&limit=2&page=2')).body.data;
      t.same(second.items, items.slice(2));
      t.match(second.pagination, { hasNextPage: false, hasPreviousPage: true });
      t.same((await receipts('&page=5')).body.data.items, []);
      for (const bad of ['&limit=0', '&limit=101', '&page=0', '&at=yesterday']) t.equal((await receipts(bad)).status, 400, bad);
      const then = (await receipts(`&at=${encodeURIComponent(afterFirst)}`)).body.data;
      t.same(then.items, items.slice(2), 'only the first settlement had happened');
    });

    await t.test("another user's pool, a context never followed: 404; no token: 401", async (t) => {
      const theirs = await receipts('', other.accessToken);
      t.equal(theirs.status, 404);
      t.match(theirs.body.error, { code: 'NOT_FOUND', reason: 'SUBSCRIPTION_NOT_FOUND' });
      t.equal((await api(app, 'GET', `${SUBS}/${agentId}/fee-receipts?walletContext=virtual`, { token: user.accessToken })).status, 404);
      t.equal((await api(app, 'GET', `${SUBS}/${agentId}/fee-receipts`)).status, 401);
    });

    await t.test('the OpenAPI document describes the route', async (t) => {
      const doc = await api(app, 'GET', '/docs/json');
      const op = doc.body.paths['/api/v1/users/me/subscriptions/{agentId}/fee-receipts'].get;
      const query = (op.parameters as Array<{ in: string; name: string }>).filter((p) => p.in === 'query').map((p) => p.name);
      t.same(query.sort(), ['at', 'limit', 'page', 'walletContext']);
      t.ok(op.responses['200'].content['application/json'].schema.properties.data, 'the answer is described');
    });
  });
}
