// The signal webhook through real HTTP: signed deliveries, structured and text signals, opens that
// lock margin in every follower pool, follow-ups that close, repeats and replays, the skips.
import t from 'tap';
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolId } from '../../domain/pool/state.ts';
import { tradeDecider } from '../../domain/trade/decide.ts';
import { signWebhookBody } from '../../infra/signing/webhook.ts';
import { api, loadState, startTestApp, type TestApp } from '../support/app.ts';
import { listedFollowableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { until } from '../support/until.ts';

const ADMIN = 'admin@example.test';
const SUBS = '/api/v1/users/me/subscriptions';

/** A delivery as an agent sends it: signed now with its secret, unless the test says otherwise. */
async function deliver(app: TestApp, agentId: string, secret: string, body: unknown, headers?: Record<string, string>) {
  const signed = signWebhookBody({ secret, body, timestampMs: Date.now() });
  return api(app, 'POST', `/api/v1/signals/${agentId}`, {
    body,
    headers: headers ?? { 'x-svc-timestamp': signed.timestampHeader, 'x-svc-signature': signed.signatureHeader },
  });
}

t.test('signals open, manage and close trades in every follower pool', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN, PRICE_WATCH_INTERVAL_MS: '200' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'signal-dev@example.test');
  const { agentId, secret } = await listedFollowableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    {
      name: 'Perp Signals',
      venue: 'PERP_VENUE',
      maxLeverage: 10,
      successFeePercent: 20,
      minTradeUsd: 1,
      recommendedPerTradePercent: 10,
      maxConcurrentPositions: 5,
    },
    { live: true },
  );
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { BTC: 50_000, SOL: 150 } } })).status, 200);

  const users: SignedIn[] = [];
  for (const n of [1, 2, 3]) users.push(await signIn(app, `signal-user${n}@example.test`));
  for (const [i, user] of users.entries()) {
    const body = { agentId, allocationAmountUsd: 1000, ...(i === 2 ? { tradeMode: 'ALERTS_ONLY' } : {}) };
    const res = await api(app, 'POST', SUBS, { token: user.accessToken, body });
    t.equal(res.status, 200, JSON.stringify(res.body));
  }
  const pools = users.map((u) => poolId(u.userId, agentId, 'virtual'));
  // The fan-out reads followers from the subscriptions read model.
  await api(app, 'GET', SUBS, { token: users[2]!.accessToken });

  let openedTradeIds: string[] = [];
  await t.test('a structured open executes in the trading pools, the alerts-only pool is skipped: partially executed', async (t) => {
    const body = {
      signalId: 'btc-long-1',
      action: 'open',
      side: 'long',
      token: 'BTC',
      leverage: 5,
      sizePercent: 10,
      stopLoss: 48_000,
      takeProfit: [52_000, 54_000],
    };
    const res = await deliver(app, agentId, secret, body);
    t.equal(res.status, 200, JSON.stringify(res.body));
    const data = res.body.data;
    t.equal(data.outcome, 'partially_executed');
    t.equal(data.repeated, false);
    t.equal(data.executionResults.length, 3);
    const executed = data.executionResults.map((r: any) => r.executionResult).filter((r: any) => r.status === 'executed');
    const skipped = data.executionResults.map((r: any) => r.executionResult).filter((r: any) => r.status === 'skipped');
    t.equal(executed.length, 2);
    t.equal(skipped.length, 1);
    t.equal(skipped[0].skipReason, 'ALERTS_ONLY');
    t.notOk(JSON.stringify(data).includes(users[0]!.userId), 'no user id in the answer');
    openedTradeIds = executed.flatMap((r: any) => r.tradeIds);
    t.equal(openedTradeIds.length, 2);
    for (const [i, id] of pools.slice(0, 2).entries()) {
      const { state } = await loadState(app, poolDecider, id);
      if (!state.followed) throw new Error('not followed');
      t.equal(state.ledger.locked, 99_500_000, `pool ${i + 1}: 10% of the 995 USD free (1000 less the fee buffer) is locked as margin`);
    }
    const trade = (await loadState(app, tradeDecider, openedTradeIds[0]!)).state;
    t.match(trade, { status: 'open', leverage: 5, notionalMicro: 497_500_000, averageFill: 50_000n * 10n ** 18n });
  });

  await t.test('the same signalId again answers the first outcome and opens nothing', async (t) => {
    const body = {
      signalId: 'btc-long-1',
      action: 'open',
      side: 'long',
      token: 'BTC',
      leverage: 5,
      sizePercent: 10,
      stopLoss: 48_000,
      takeProfit: [52_000, 54_000],
    };
    const res = await deliver(app, agentId, secret, body);
    t.equal(res.status, 200);
    t.equal(res.body.data.repeated, true);
    t.equal(res.body.data.outcome, 'partially_executed');
    const { state } = await loadState(app, poolDecider, pools[0]!);
    t.equal(state.followed && Object.keys(state.openTrades).length, 1, 'still one trade');
  });

  await t.test('authentication: a replayed signature, a wrong one, a stale timestamp are 401; an unknown agent 404; a bad body 400', async (t) => {
    const body = { signalId: 'auth-1', text: 'gm traders' };
    const signed = signWebhookBody({ secret, body, timestampMs: Date.now() });
    const headers = { 'x-svc-timestamp': signed.timestampHeader, 'x-svc-signature': signed.signatureHeader };
    t.equal((await deliver(app, agentId, secret, body, headers)).status, 200);
    const replayed = await deliver(app, agentId, secret, body, headers);
    t.equal(replayed.status, 401);
    t.equal(replayed.body.error.reason, 'INVALID_SIGNATURE');
    t.equal((await deliver(app, agentId, 'not-the-secret', { text: 'x' })).status, 401);
    const stale = signWebhookBody({ secret, body, timestampMs: Date.now() - 6 * 60_000 });
    t.equal((await deliver(app, agentId, secret, body, { 'x-svc-timestamp': stale.timestampHeader, 'x-svc-signature': stale.signatureHeader })).status, 401);
    t.equal((await deliver(app, agentId, secret, body, {})).status, 401, 'no headers');
    const unknown = await deliver(app, '00000000-0000-0000-0000-000000000000', secret, body);
    t.equal(unknown.status, 404);
    const bad = await deliver(app, agentId, secret, { action: 'explode' });
    t.equal(bad.status, 400);
    t.equal(bad.body.success, false);
    const levels = await deliver(app, agentId, secret, { action: 'open', side: 'long', token: 'BTC', entry: 50_000, stopLoss: 51_000 });
    t.equal(levels.status, 400, 'a structured long with its stop above entry');
    t.equal(levels.body.error.reason, 'INVALID_LEVELS');
  });

  await t.test('chatter is unmatched and kept; text levels that contradict the side are skipped INVALID_LEVELS', async (t) => {
    const chatter = await deliver(app, agentId, secret, { text: 'Good morning fam, big week ahead 🚀' });
    t.equal(chatter.status, 200);
    t.equal(chatter.body.data.outcome, 'unmatched');
    const wrong = await deliver(app, agentId, secret, { text: 'LONG BTC entry 50000 SL 51000 TP 52000' });
    t.equal(wrong.status, 200);
    t.equal(wrong.body.data.outcome, 'skipped');
    t.equal(wrong.body.data.skipReason, 'INVALID_LEVELS');
  });

  await t.test('a text follow-up closes the trade in every pool: margin released, PnL realized', async (t) => {
    t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { BTC: 51_000 } } })).status, 200);
    const res = await deliver(app, agentId, secret, { signalId: 'btc-close-1', text: 'Close BTC long now' });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.equal(res.body.data.outcome, 'partially_executed', JSON.stringify(res.body.data));
    for (const id of pools.slice(0, 2)) {
      const { state } = await loadState(app, poolDecider, id);
      if (!state.followed) throw new Error('not followed');
      t.equal(state.ledger.locked, 0, 'the margin is released');
      t.ok(state.ledger.realized > 0, `a profit is realized (${state.ledger.realized})`);
    }
    for (const tradeId of openedTradeIds) t.equal((await loadState(app, tradeDecider, tradeId)).state.status, 'closed');
  });

  const setPrices = async (prices: Record<string, number>) =>
    t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices } })).status, 200);

  await t.test('the price watcher takes profit when the mark crosses the targets, and the pool realizes it', async (t) => {
    const res = await deliver(app, agentId, secret, { signalId: 'sol-long-1', text: 'LONG SOL x2 now, TP 160, SL 140' });
    t.equal(res.status, 200);
    t.equal(res.body.data.outcome, 'partially_executed', JSON.stringify(res.body.data));
    const tradeId = res.body.data.executionResults.find((r: any) => r.executionResult.status === 'executed').executionResult.tradeIds[0] as string;
    const realizedBefore = (await loadState(app, poolDecider, pools[0]!)).state;
    await setPrices({ SOL: 161 });
    await until('the target to close the trade', async () => (await loadState(app, tradeDecider, tradeId)).state.status === 'closed');
    const trade = (await loadState(app, tradeDecider, tradeId)).state;
    t.match(trade, { status: 'closed' });
    const owner = pools.find((p) => p.startsWith(trade.status === 'closed' ? trade.poolId.split('.')[0]! : '-'))!;
    await until('the pool to realize it', async () => {
      const { state } = await loadState(app, poolDecider, owner);
      return state.followed && Object.keys(state.openTrades).length === 0;
    });
    const after = (await loadState(app, poolDecider, owner)).state;
    if (!after.followed || !realizedBefore.followed) throw new Error('not followed');
    t.ok(after.ledger.realized > 0, 'a profit realized');
    t.equal(after.ledger.locked, 0);
  });

  await t.test("GET /api/v1/trades lists the caller's trades; POST /api/v1/trades/{id}/close closes one of them, 404 for anyone else's", async (t) => {
    const res = await deliver(app, agentId, secret, { signalId: 'btc-long-2', action: 'open', side: 'long', token: 'BTC', leverage: 2, sizeUsd: 20 });
    t.equal(res.status, 200);
    const user = users[0]!;
    // The read model shows the last subtest's trade closed a moment after its pool did: wait for this one alone.
    await until('the trade to be listed', async () => {
      const list = await api(app, 'GET', '/api/v1/trades?status=open', { token: user.accessToken });
      return list.body.data.items.length === 1 && list.body.data.items[0].token === 'BTC';
    });
    const list = await api(app, 'GET', '/api/v1/trades?status=open', { token: user.accessToken });
    const tradeId = list.body.data.items[0].id as string;
    t.match(list.body.data.items[0], { token: 'BTC', side: 'long', leverage: 2, marginUsd: 20, status: 'open' });
    t.equal((await api(app, 'POST', `/api/v1/trades/${tradeId}/close`, {})).status, 401);
    const stranger = await api(app, 'POST', `/api/v1/trades/${tradeId}/close`, { token: users[1]!.accessToken });
    t.equal(stranger.status, 404, 'another user cannot close it');
    t.equal((await api(app, 'POST', '/api/v1/trades/no-such-trade/close', { token: user.accessToken })).status, 404);
    const closed = await api(app, 'POST', `/api/v1/trades/${tradeId}/close`, { token: user.accessToken });
    t.equal(closed.status, 200, JSON.stringify(closed.body));
    t.match(closed.body.data, { id: tradeId, status: 'closed', closeReason: 'USER' });
    const again = await api(app, 'POST', `/api/v1/trades/${tradeId}/close`, { token: user.accessToken });
    t.equal(again.status, 200, 'closing a closed trade again changes nothing');
    t.same(again.body.data, closed.body.data);
    const { state } = await loadState(app, poolDecider, pools[0]!);
    t.equal(state.followed && state.ledger.locked, 0, 'its margin is back in the pool');
  });

  await t.test('replay: a signal unmatched by the old rules executes once with the new ones; an executed signal never again', async (t) => {
    const chatter = await deliver(app, agentId, secret, { signalId: 'ape-1', text: 'Ape into SOL here' });
    t.equal(chatter.body.data.outcome, 'unmatched');
    const patched = await api(app, 'PATCH', `/api/v1/developers/agents/${agentId}`, {
      token: dev.accessToken,
      body: { signalDetectionRule: { longKeywords: ['ape into'] } },
    });
    t.equal(patched.status, 200, JSON.stringify(patched.body));
    const replay = `/api/v1/developers/agents/${agentId}/signals/ape-1/replay`;
    await until('the inbox to show the signal', async () => (await api(app, 'POST', replay, { token: dev.accessToken })).status === 200);
    const dry = await api(app, 'POST', replay, { token: dev.accessToken });
    t.match(dry.body.data, { dryRun: true, changed: true, interpretation: { kind: 'signal' } });
    const run = await api(app, 'POST', `${replay}?dryRun=false`, { token: dev.accessToken });
    t.equal(run.status, 200, JSON.stringify(run.body));
    t.match(run.body.data, { dryRun: false, execution: { signalId: 'ape-1:replay', outcome: 'partially_executed', repeated: false } });
    const again = await api(app, 'POST', replay, { token: dev.accessToken, body: { dryRun: false } });
    t.match(again.body.data, { execution: { outcome: 'partially_executed', repeated: true } }, 'the replay executes once');
    const executed = await api(app, 'POST', `/api/v1/developers/agents/${agentId}/signals/btc-long-1/replay?dryRun=false`, { token: dev.accessToken });
    t.equal(executed.status, 409);
    t.equal(executed.body.error.reason, 'SIGNAL_NOT_REPLAYABLE');
    t.equal((await api(app, 'POST', `/api/v1/developers/agents/${agentId}/signals/ape-1/replay?dryRun=false`, { token: users[0]!.accessToken })).status, 403);
  });

  await t.test(
    'DELETE /api/v1/agents/{id}: only its developer or an administrator; 409 with open trades unless they are closed first; the pools stop',
    async (t) => {
      const res = await deliver(app, agentId, secret, { signalId: 'btc-long-3', action: 'open', side: 'long', token: 'BTC', leverage: 2, sizeUsd: 10 });
      t.equal(res.body.data.outcome, 'partially_executed');
      const path = `/api/v1/agents/${agentId}`;
      t.equal((await api(app, 'DELETE', path, {})).status, 401);
      const stranger = await api(app, 'DELETE', path, { token: users[0]!.accessToken });
      t.equal(stranger.status, 403);
      const busy = await api(app, 'DELETE', path, { token: dev.accessToken });
      t.equal(busy.status, 409);
      t.match(busy.body.error, { code: 'CONFLICT', reason: 'AGENT_HAS_OPEN_TRADES' });
      const deleted = await api(app, 'DELETE', `${path}?closeActiveTrades=true`, { token: dev.accessToken });
      t.equal(deleted.status, 200, JSON.stringify(deleted.body));
      t.match(
        deleted.body.data,
        { message: String, affectedBotCount: 3, activeTradesClosed: 5 },
        "this signal's two trades, the replay's two and the one the second user kept open",
      );
      for (const id of pools) {
        const { state } = await loadState(app, poolDecider, id);
        if (!state.followed) throw new Error('not followed');
        t.equal(state.settings.isPaused, true, 'the pool takes no new trade');
        t.equal(state.ledger.locked, 0, 'its capital is free to withdraw');
      }
      t.equal((await api(app, 'GET', path, {})).status, 404, 'the agent left the listings');
      t.equal((await deliver(app, agentId, secret, { text: 'LONG BTC now' })).status, 404, 'it takes no signal');
      t.equal((await api(app, 'DELETE', path, { token: dev.accessToken })).status, 404, 'deleting it again: not found');
      t.equal((await api(app, 'DELETE', '/api/v1/agents/no-such-agent', { token: admin.accessToken })).status, 404);
    },
  );
});
