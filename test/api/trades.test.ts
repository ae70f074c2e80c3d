import t from 'tap';
import type { TradeCommand } from '../../domain/trade/decide.ts';
import type { RequestTrade } from '../../domain/trade/commands.ts';
import { tradeStream } from '../../domain/trade/state.ts';
import { rebuild } from '../../projections/rebuild.ts';
import { tradesProjector } from '../../projections/trades/projector.ts';
import { at } from '../support/given-when-then.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { appendFacts } from '../support/facts.ts';
import { cancel, close, history, mark, requestData, usd, pb } from '../domain/trade/fixtures.ts';

const AGENT_X = '11111111-1111-4111-8111-111111111111';
const AGENT_Y = '22222222-2222-4222-8222-222222222222';
const day = (n: number, hour = 12) => new Date(Date.UTC(2025, 2, n, hour));

/** A trade's request, at `when`, expiring a day later. */
const request = (over: Partial<RequestTrade['data']>, when: Date): TradeCommand => ({
  type: 'RequestTrade',
  data: requestData({ expiresAt: new Date(when.getTime() + 86_400_000).toISOString(), ...over }),
  metadata: at(when),
});
const pending = { entry: { kind: 'zone' as const, low: pb(usd(45_000)), high: pb(usd(46_000)) }, stopLoss: pb(usd(40_000)) };

t.test('GET /api/v1/trades', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const alice = await signIn(app, 'alice@example.test');
  const bob = await signIn(app, 'bob@example.test');
  const pool = (user: { userId: string }, agent: string, context = 'virtual') => `${user.userId}.${agent}.${context}`;
  const write = (tradeId: string, commands: TradeCommand[]) => appendFacts(app, tradeStream(tradeId), history(...commands));

  // Alice: an open trade marked once, a pending zone entry in the real context, a trade its stop
  // closed, a cancelled and an expired entry; Bob: one trade.
  await write('open-1', [request({ tradeId: 'open-1', poolId: pool(alice, AGENT_X) }, day(1)), mark(51_000, day(1, 13))]);
  await write('pending-1', [request({ tradeId: 'pending-1', poolId: pool(alice, AGENT_Y, 'real'), ...pending }, day(2))]);
  await write('stopped-1', [request({ tradeId: 'stopped-1', poolId: pool(alice, AGENT_X) }, day(3)), mark(47_000, day(3, 14))]);
  await write('cancelled-1', [request({ tradeId: 'cancelled-1', poolId: pool(alice, AGENT_Y), ...pending }, day(4)), cancel(day(4, 15))]);
  await write('expired-1', [request({ tradeId: 'expired-1', poolId: pool(alice, AGENT_X), ...pending }, day(5)), mark(50_000, day(7))]);
  await write('bob-1', [request({ tradeId: 'bob-1', poolId: pool(bob, AGENT_X) }, day(6))]);

  const list = async (query = '', token = alice.accessToken) => api(app, 'GET', `/api/v1/trades${query}`, { token });

  await t.test("the caller's trades, newest first, with the trade's figures in USD", async (t) => {
    const res = await list();
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.same(
      res.body.data.items.map((i: { id: string }) => i.id),
      ['expired-1', 'cancelled-1', 'stopped-1', 'pending-1', 'open-1'],
      "Bob's trade is not Alice's",
    );
    t.same(res.body.data.pagination, { total: 5, limit: 20, page: 1, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    const byId = Object.fromEntries(res.body.data.items.map((i: { id: string }) => [i.id, i]));
    t.same(
      byId['open-1'],
      {
        id: 'open-1',
        agentId: AGENT_X,
        walletContext: 'virtual',
        token: 'BTC',
        decimals: 8,
        side: 'long',
        leverage: 5,
        status: 'open',
        entry: { kind: 'market' },
        notionalUsd: 1000,
        marginUsd: 200,
        averageFillPrice: 50_000,
        sizeUnits: '2000000',
        remainingUnits: '2000000',
        stopLoss: { price: 48_000, kind: 'STOP_LOSS' },
        targets: [
          { tier: 1, price: 52_000, closePercent: 50 },
          { tier: 2, price: 54_000, closePercent: 50 },
        ],
        trailing: null,
        realizedPnlUsd: 0,
        unrealizedPnlUsd: 19,
        feesPaidUsd: 1,
        closeReason: null,
        expiresAt: day(2).toISOString(),
        openedAt: day(1).toISOString(),
        filledAt: day(1).toISOString(),
        closedAt: null,
        updatedAt: day(1, 13).toISOString(),
      },
      'a 1000 USD long at 50,000 marked at 51,000: +20 USD less the 1 USD entry fee it carries',
    );
    t.match(byId['stopped-1'], {
      status: 'closed',
      closeReason: 'STOP_LOSS',
      remainingUnits: '0',
      sizeUnits: '2000000',
      targets: [],
      unrealizedPnlUsd: null,
      closedAt: day(3, 14).toISOString(),
    });
    t.ok(byId['stopped-1'].realizedPnlUsd < -60, `the stop realized a loss net of fees (${byId['stopped-1'].realizedPnlUsd})`);
    t.equal(byId['stopped-1'].feesPaidUsd, 1.94, 'the entry fee and the exit fee at 47,000');
    t.match(byId['pending-1'], {
      status: 'pending',
      walletContext: 'real',
      agentId: AGENT_Y,
      entry: { kind: 'zone', low: 45_000, high: 46_000 },
      averageFillPrice: null,
      sizeUnits: '0',
      filledAt: null,
      closedAt: null,
    });
    t.match(byId['cancelled-1'], { status: 'cancelled', closedAt: day(4, 15).toISOString(), closeReason: null });
    t.match(byId['expired-1'], { status: 'expired', closedAt: day(7).toISOString() });
    for (const item of res.body.data.items) {
      t.notOk('poolId' in item || 'userId' in item, 'the pool id and user id stay internal');
    }
  });

  await t.test('filters: agentId, status, walletContext, and together', async (t) => {
    const ids = async (query: string) => (await list(query)).body.data.items.map((i: { id: string }) => i.id);
    t.same(await ids(`?agentId=${AGENT_Y}`), ['cancelled-1', 'pending-1']);
    t.same(await ids('?status=open'), ['open-1']);
    t.same(await ids('?status=closed'), ['stopped-1']);
    t.same(await ids('?status=expired'), ['expired-1']);
    t.same(await ids('?status=rejected'), []);
    t.same(await ids('?walletContext=real'), ['pending-1']);
    t.same(await ids(`?agentId=${AGENT_X}&walletContext=virtual&status=closed`), ['stopped-1']);
    t.same(await ids('?agentId=nobody'), []);
    t.same(
      (await list('', bob.accessToken)).body.data.items.map((i: { id: string }) => i.id),
      ['bob-1'],
    );
  });

  await t.test('pagination: page and limit, with the same envelope as the other lists', async (t) => {
    const res = await list('?limit=2&page=2');
    t.equal(res.status, 200);
    t.same(
      res.body.data.items.map((i: { id: string }) => i.id),
      ['stopped-1', 'pending-1'],
    );
    t.same(res.body.data.pagination, { total: 5, limit: 2, page: 2, totalPages: 3, hasNextPage: true, hasPreviousPage: true });
    const past = await list('?limit=2&page=9');
    t.same(past.body.data.items, []);
    t.equal(past.body.data.pagination.total, 5);
    const filtered = await list('?status=open&limit=1');
    t.same(filtered.body.data.pagination, { total: 1, limit: 1, page: 1, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
  });

  await t.test('a bad filter is a 400 in the envelope; no token is a 401', async (t) => {
    for (const query of ['?status=bogus', '?walletContext=paper', '?limit=0', '?limit=101', '?page=0', '?agentId=']) {
      const res = await list(query);
      t.equal(res.status, 400, query);
      t.equal(res.body.success, false);
      t.equal(res.body.error.code, 'BAD_REQUEST');
      t.ok(res.body.error.message.length > 0, res.body.error.message);
    }
    const anonymous = await api(app, 'GET', '/api/v1/trades');
    t.equal(anonymous.status, 401);
    t.equal(anonymous.body.success, false);
  });

  await t.test('the list follows the trade: a later close shows at once', async (t) => {
    const before = [request({ tradeId: 'open-1', poolId: pool(alice, AGENT_X) }, day(1)), mark(51_000, day(1, 13))];
    await appendFacts(app, tradeStream('open-1'), history(...before, close(100, 52_000, 'USER', day(8))).slice(history(...before).length));
    const res = await list('?status=closed');
    t.same(
      res.body.data.items.map((i: { id: string }) => i.id),
      ['stopped-1', 'open-1'],
      'newest first by request time',
    );
    t.match(res.body.data.items[1], { closeReason: 'USER', closedAt: day(8).toISOString(), remainingUnits: '0', unrealizedPnlUsd: null });
  });

  await t.test('the read model rebuilds row for row', async (t) => {
    const rows = async () => ({
      trades: (await app.deps.pool.query('SELECT * FROM trades ORDER BY trade_id')).rows,
      states: (await app.deps.pool.query('SELECT * FROM trade_states ORDER BY trade_id')).rows,
    });
    const live = await rows();
    t.equal(live.trades.length, 6);
    await rebuild(app.deps.store, app.deps.pool, tradesProjector);
    t.same(await rows(), live);
  });
});
