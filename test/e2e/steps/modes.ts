import type { Test } from 'tap';
import { poolId } from '../../../domain/pool/state.ts';
import { anonymizedSubscriberId } from '../../../infra/anonymize.ts';
import { signWebhookBody } from '../../../infra/signing/webhook.ts';
import { api, startTestApp, type TestApp } from '../../support/app.ts';
import { signIn, type SignedIn } from '../../support/auth.ts';
import { until } from '../../support/until.ts';
import { ADMIN, SUBS, rebuildEqualsLive } from './support.ts';

type Follower = 'auto' | 'full' | 'paper' | 'later';
type Results = Record<Follower, { status: string; tradeIds: string[]; skipReason?: string }>;

/**
 * Trade modes and going live (docs/decisions.md, "Trade modes and going live"), one agent's
 * signals to four followers: AUTO_TRADING (opens, closes), FULL_TRADING (also stop moves and
 * partial closes), TEST_TRADING (paper: the would-be trade in the pool's history, nothing locked)
 * and a pool followed with goLiveUponConfirmation false (skipped AWAITING_GO_LIVE until the user
 * goes live through the same follow route); the webhook's answer carries each pool's
 * `executionResult`; a rebuild of every read model equals the live ones.
 */
export async function modesFlow(t: Test, eventStore: 'postgres' | 'esdb') {
  const app = await startTestApp({ eventStore, config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const developer = await signIn(app, 'modes-dev@example.test');
  const users: Record<Follower, SignedIn> = {
    auto: await signIn(app, 'modes-auto@example.test'),
    full: await signIn(app, 'modes-full@example.test'),
    paper: await signIn(app, 'modes-paper@example.test'),
    later: await signIn(app, 'modes-later@example.test'),
  };
  const listed = await api(app, 'POST', '/api/v1/developers/agents', {
    token: developer.accessToken,
    body: { name: 'Modes', venue: 'PERP_VENUE', maxLeverage: 5, minTradeUsd: 1 },
  });
  const agentId = listed.body.data.id as string;
  const secret = listed.body.data.inboundWebhookSigningSecretReveal as string;
  t.equal((await api(app, 'POST', `/api/admin/developer-agents/${agentId}/approve`, { token: admin.accessToken, body: {} })).status, 200);
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { ETH: 3000 } } })).status, 200);

  const choices: Record<Follower, Record<string, unknown>> = {
    auto: {},
    full: { tradeMode: 'FULL_TRADING' },
    paper: { tradeMode: 'TEST_TRADING' },
    later: { goLiveUponConfirmation: false },
  };
  for (const who of Object.keys(users) as Follower[]) {
    const res = await api(app, 'POST', SUBS, { token: users[who].accessToken, body: { agentId, allocationAmountUsd: 500, ...choices[who] } });
    t.equal(res.status, 200, `${who} follows: ${JSON.stringify(res.body)}`);
    t.match(
      res.body.data.subscription,
      { allocatedUsd: 500, isLive: who !== 'later', goLiveUponConfirmation: who !== 'later' },
      `${who}: the record says whether the pool is live`,
    );
  }
  const row = async (who: Follower) => (await api(app, 'GET', SUBS, { token: users[who].accessToken })).body.data[0];
  t.match(await row('later'), { isLive: false, goLiveUponConfirmation: false, allocatedUsd: 500 }, 'configured, not live: the list shows it');
  // The perp venue's fee buffer keeps a little of the 500 USD: what is free before any signal.
  const free = (await row('paper')).withdrawableUsd as number;

  const ids = Object.fromEntries(
    (Object.keys(users) as Follower[]).map((who) => [anonymizedSubscriberId(app.deps.config.JWT_SECRET, agentId, users[who].userId), who]),
  );
  const deliver = async (body: Record<string, unknown>) => {
    const signed = signWebhookBody({ secret, body, timestampMs: Date.now() });
    const res = await api(app, 'POST', `/api/v1/signals/${agentId}`, {
      body,
      headers: { 'x-svc-timestamp': signed.timestampHeader, 'x-svc-signature': signed.signatureHeader },
    });
    t.equal(res.status, 200, JSON.stringify(res.body));
    const byFollower = Object.fromEntries(
      (res.body.data.executionResults as Array<{ subscriberId: string; executionResult: Results[Follower] }>).map((r) => [
        ids[r.subscriberId],
        r.executionResult,
      ]),
    ) as Results;
    return { data: res.body.data, results: byFollower };
  };
  const ledger = async (who: Follower) =>
    (await api(app, 'GET', `${SUBS}/${agentId}/ledger?limit=100`, { token: users[who].accessToken })).body.data.items as Array<Record<string, any>>;

  // An open: the live pools trade, the paper pool records what would have opened, the pool not live skips.
  const opened = await deliver({ signalId: 'modes-1', action: 'open', side: 'long', token: 'ETH', leverage: 2, sizeUsd: 100, stopLoss: 2800 });
  t.equal(opened.data.outcome, 'partially_executed');
  t.match(opened.results, {
    auto: { status: 'executed' },
    full: { status: 'executed' },
    paper: { status: 'simulated' },
    later: { status: 'skipped', skipReason: 'AWAITING_GO_LIVE', tradeIds: [] },
  });
  t.equal(opened.results.paper.tradeIds.length, 1, 'the paper trade is named');
  await until(
    'the live pools to lock their margin',
    async () => (await row('auto')).lockedInPositionsUsd === 100 && (await row('full')).lockedInPositionsUsd === 100,
  );
  t.match(await row('paper'), { lockedInPositionsUsd: 0, allocatedUsd: 500, withdrawableUsd: free }, 'paper: nothing locked');
  t.match(await row('later'), { lockedInPositionsUsd: 0, withdrawableUsd: free }, 'not live: nothing locked');
  t.match(
    (await ledger('paper')).find((i) => i.type === 'TradeSimulated'),
    { amounts: { marginUsd: 100 }, balances: { withdrawableUsd: free } },
    "the paper pool's history shows the would-be trade and its size",
  );
  t.match(
    (await ledger('later')).find((i) => i.type === 'TradeRefused'),
    { reason: 'AWAITING_GO_LIVE', amounts: {} },
    "the waiting pool's history shows the skip",
  );
  const audit = await api(app, 'GET', `/api/admin/audit/pools/${poolId(users.later.userId, agentId, 'virtual')}`, { token: admin.accessToken });
  t.match(audit.body.data, { status: 'MATCH', differences: [] }, "the auditors' replay of the waiting pool matches its row");

  // Management follow-ups: full trading applies them, auto trading does not.
  const moved = await deliver({ signalId: 'modes-2', replyTo: 'modes-1', action: 'update', token: 'ETH', side: 'long', stopLoss: 2900 });
  t.match(moved.results, {
    auto: { status: 'skipped', skipReason: 'FULL_TRADING_ONLY' },
    full: { status: 'executed' },
    paper: { status: 'skipped', skipReason: 'NO_MATCHING_TRADE' },
    later: { status: 'skipped', skipReason: 'AWAITING_GO_LIVE' },
  });
  const partial = await deliver({ signalId: 'modes-3', replyTo: 'modes-1', action: 'close_partial', token: 'ETH', side: 'long', closePercent: 50 });
  t.match(partial.results, { auto: { status: 'skipped', skipReason: 'FULL_TRADING_ONLY' }, full: { status: 'executed' } });
  const trade = async (who: Follower) => (await api(app, 'GET', '/api/v1/trades', { token: users[who].accessToken })).body.data.items[0];
  const managed = async () => {
    const full = await trade('full');
    return full?.stopLoss?.price === 2900 && full.remainingUnits !== full.sizeUnits;
  };
  await until('the trades read model to show the stop moved and half closed', managed);
  t.match(await trade('full'), { stopLoss: { price: 2900 } }, 'full trading moved the stop');
  t.ok(BigInt((await trade('full')).remainingUnits) < BigInt((await trade('full')).sizeUnits), 'and closed half');
  t.match(await trade('auto'), { stopLoss: { price: 2800 } }, "auto trading kept the trade's own stop");
  t.equal((await trade('auto')).remainingUnits, (await trade('auto')).sizeUnits, 'and its whole size');

  // A close: every mode acts on it.
  const closed = await deliver({ signalId: 'modes-4', replyTo: 'modes-1', action: 'close', token: 'ETH', side: 'long' });
  t.match(closed.results, { auto: { status: 'executed' }, full: { status: 'executed' }, later: { skipReason: 'AWAITING_GO_LIVE' } });

  // The user goes live through the same follow route; the next open trades in that pool too.
  const live = await api(app, 'POST', SUBS, { token: users.later.accessToken, body: { agentId, goLiveUponConfirmation: true } });
  t.equal(live.status, 200, JSON.stringify(live.body));
  t.match(live.body.data.subscription, { isLive: true, goLiveUponConfirmation: true, allocatedUsd: 500 });
  t.match(await row('later'), { isLive: true });
  const next = await deliver({ signalId: 'modes-5', action: 'open', side: 'long', token: 'ETH', leverage: 2, sizeUsd: 50 });
  t.match(next.results, { auto: { status: 'executed' }, full: { status: 'executed' }, paper: { status: 'simulated' }, later: { status: 'executed' } });
  await until('the pool gone live to lock its margin', async () => (await row('later')).lockedInPositionsUsd === 50);
  t.match(
    (await ledger('later')).map((i) => i.type),
    ['AgentFollowed', 'GoLiveDeferred', 'AllocationAdded', 'TradeRefused', 'FollowSettingsUpdated', 'PoolWentLive', 'TradeOpened'],
  );

  await inboxShowsEachPool(t, app, developer, agentId);
  await openApiSaysSo(t, app);
  // The webhook answers before the read models apply its signal: they catch up with the log first.
  await rebuildEqualsLive(t, app);
}

/** The developer's inbox shows each pool's executionResult as the webhook answered it. */
async function inboxShowsEachPool(t: Test, app: TestApp, developer: SignedIn, agentId: string) {
  const inbox = await api(app, 'GET', `/api/v1/developers/agents/${agentId}/signals?limit=100`, { token: developer.accessToken });
  const first = (
    inbox.body.data.items as Array<{ signalId: string; executionResults: Array<{ executionResult: { status: string; skipReason?: string } }> }>
  ).find((i) => i.signalId === 'modes-1')!;
  t.same(first.executionResults.map((r) => r.executionResult.skipReason ?? r.executionResult.status).sort(), [
    'AWAITING_GO_LIVE',
    'executed',
    'executed',
    'simulated',
  ]);
}

/** The OpenAPI document describes what the answers carry: each pool's executionResult, and the record's isLive. */
async function openApiSaysSo(t: Test, app: TestApp) {
  const doc = (await api(app, 'GET', '/docs/json')).body;
  const json = (op: { responses: Record<string, { content: Record<string, { schema: any }> }> }) => op.responses['200']!.content['application/json']!.schema;
  const answer = json(doc.paths['/api/v1/signals/{agentId}'].post).properties.data;
  const perPool = answer.properties.executionResults.items;
  t.same(Object.keys(perPool.properties).sort(), ['executionResult', 'subscriberId', 'walletContext'], 'one item per pool');
  t.same(
    Object.keys(perPool.properties.executionResult.properties).sort(),
    ['errorMessage', 'errorTags', 'skipReason', 'status', 'tradeIds'],
    "the spec's executionResult",
  );
  t.same(perPool.properties.executionResult.properties.status.enum, ['executed', 'simulated', 'skipped', 'failed']);
  const record = json(doc.paths['/api/v1/users/me/subscriptions'].get).properties.data.items;
  t.equal(record.properties.isLive.type, 'boolean', 'the subscription record shows isLive');
}
