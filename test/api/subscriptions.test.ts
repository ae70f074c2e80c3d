import t from 'tap';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { api, loadState, startTestApp, type TestApp } from '../support/app.ts';
import { followableAgent, seatHolders } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';

const PATH = '/api/v1/users/me/subscriptions';

const agentBody = (overrides: Record<string, unknown> = {}) => ({
  name: 'Momentum Scalper',
  avatarUrl: 'https://img.example.test/momentum.png',
  successFeePercent: 20,
  venue: 'SPOT_VENUE',
  minAllocationUsd: 25.5,
  minTradeUsd: 5,
  minPerTradePercent: 2,
  recommendedPerTradePercent: 10,
  maxConcurrentPositions: 4,
  maxEntriesPerTrade: 2,
  ...overrides,
});

const recordFields = [
  'agent',
  'subscribedAt',
  'createdAt',
  'updatedAt',
  'subscriptionType',
  'tradeMode',
  'walletContext',
  'walletMode',
  'allocationMode',
  'allocatedUsd',
  'inUseUsd',
  'withdrawableUsd',
  'currentBalanceUsd',
  'availableUsd',
  'inTradesUsd',
  'feeBufferUsd',
  'lockedInPositionsUsd',
  'venue',
  'perpVenueTotalEquityUsd',
  'perpVenueFreeMarginUsd',
  'bridgeStatus',
  'bridgeTransactionId',
  'pendingDeltaUsd',
  'minAllocationUsd',
  'minTradeUsd',
  'minPerTradePercent',
  'recommendedPerTradePercent',
  'maxConcurrentPositions',
  'maxEntriesPerTrade',
  'allocationBalanceAudit',
  'goLiveUponConfirmation',
  'isLive',
  'isPaused',
];
const auditFields = [
  'depositedUsd',
  'realizedPnlUsd',
  'unrealizedPnlUsd',
  'lockedMarginUsd',
  'feeBufferUsd',
  'ledgerAvailableUsd',
  'dustUsd',
  'pendingDeltaUsd',
  'reconciliationStatus',
  'netRealizedProfitUsd',
  'pendingPlatformFeeUsd',
  'pendingCreatorFeeUsd',
  'estimatedSuccessFeeUsd',
  'estimatedPlatformFeeUsd',
  'estimatedCreatorFeeUsd',
  'netUserPayoutUsd',
];

t.test('following an agent with a capital pool', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  let users = 0;
  const newUser = () => signIn(app, `follower${++users}@example.test`);

  const listAgent = async (overrides: Record<string, unknown> = {}): Promise<string> => {
    const res = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: agentBody(overrides) });
    if (res.status !== 201) throw new Error(`listing: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.id as string;
  };
  const followable = (overrides: Record<string, unknown> = {}) =>
    followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, agentBody(overrides));
  const follow = (user: SignedIn, body: Record<string, unknown>) => api(app, 'POST', PATH, { token: user.accessToken, body });
  const mine = async (user: SignedIn) => (await api(app, 'GET', PATH, { token: user.accessToken })).body.data as any[];
  const virtualBalance = async (app: TestApp, user: SignedIn) => (await loadState(app, walletDecider, user.userId)).state.balances.virtual;

  await t.test('without a token both routes answer 401', async (t) => {
    const post = await api(app, 'POST', PATH, { body: { agentId: 'x' } });
    t.equal(post.status, 401);
    t.equal(post.body.error.code, 'UNAUTHORIZED');
    t.equal((await api(app, 'GET', PATH)).status, 401);
  });

  await t.test('a USD follow debits the 10000 USD virtual start and an immediate GET shows the pool', async (t) => {
    const user = await newUser();
    const agentId = await followable();
    const res = await follow(user, { agentId, allocationMode: 'USD_AMOUNT', allocationAmountUsd: 250.75 });
    t.equal(res.status, 200);
    t.match(res.body.data, {
      success: true,
      message: 'Now following Momentum Scalper',
      agentName: 'Momentum Scalper',
      agentImageUrl: 'https://img.example.test/momentum.png',
      subscription: { agent: agentId, allocatedUsd: 250.75, allocationAmountUsd: 250.75, walletContext: 'virtual' },
    });
    const list = await mine(user);
    t.equal(list.length, 1);
    t.equal(list[0].allocatedUsd, 250.75, 'read-your-writes: the GET right after shows the allocation');
    t.equal(await virtualBalance(app, user), 10_000_000_000 - 250_750_000, 'the wallet opened at 10000 USD and paid exactly the allocation');
  });

  await t.test('the subscription record carries every field and the allocation balance audit', async (t) => {
    const user = await newUser();
    const agentId = await followable({ successFeePercent: 10 });
    await follow(user, { agentId, allocationAmountUsd: 1000 });
    const [s] = await mine(user);
    for (const field of recordFields) t.ok(field in s, `record has ${field}`);
    for (const field of auditFields) t.ok(field in s.allocationBalanceAudit, `audit has ${field}`);
    t.match(s, {
      agent: agentId,
      subscriptionType: 'AUTO_TRADING',
      tradeMode: 'AUTO_TRADING',
      walletContext: 'virtual',
      walletMode: 'VIRTUAL',
      allocationMode: 'USD_AMOUNT',
      allocatedUsd: 1000,
      currentBalanceUsd: 1000,
      availableUsd: 1000,
      withdrawableUsd: 1000,
      inUseUsd: 0,
      inTradesUsd: 0,
      lockedInPositionsUsd: 0,
      feeBufferUsd: 0,
      pendingDeltaUsd: 0,
      venue: 'SPOT_VENUE',
      perpVenueTotalEquityUsd: null,
      perpVenueFreeMarginUsd: null,
      bridgeStatus: null,
      minAllocationUsd: 25.5,
      minTradeUsd: 5,
      minPerTradePercent: 2,
      recommendedPerTradePercent: 10,
      maxConcurrentPositions: 4,
      maxEntriesPerTrade: 2,
      goLiveUponConfirmation: true,
      isPaused: false,
    });
    t.same(s.allocationBalanceAudit, {
      depositedUsd: 1000,
      realizedPnlUsd: 0,
      unrealizedPnlUsd: 0,
      lockedMarginUsd: 0,
      feeBufferUsd: 0,
      ledgerAvailableUsd: 1000,
      dustUsd: 0,
      pendingDeltaUsd: 0,
      reconciliationStatus: 'IN_SYNC',
      netRealizedProfitUsd: 0,
      pendingPlatformFeeUsd: 0,
      pendingCreatorFeeUsd: 0,
      estimatedSuccessFeeUsd: 0,
      estimatedPlatformFeeUsd: 0,
      estimatedCreatorFeeUsd: 0,
      netUserPayoutUsd: 1000,
    });
    t.ok(!Number.isNaN(Date.parse(s.subscribedAt)) && s.createdAt === s.subscribedAt);
  });

  await t.test('a perp agent keeps a fee buffer of 0.05% × maxLeverage of the allocation', async (t) => {
    const user = await newUser();
    const agentId = await followable({ name: 'Perp Rider', venue: 'PERP_VENUE', maxLeverage: 10 });
    const res = await follow(user, { agentId, allocationAmountUsd: 1000 });
    t.match(res.body.data.subscription, {
      venue: 'PERP_VENUE',
      feeBufferUsd: 5,
      withdrawableUsd: 995,
      availableUsd: 1000,
      allocationBalanceAudit: { feeBufferUsd: 5, ledgerAvailableUsd: 995 },
      bridgeStatus: null,
    });
  });

  await t.test('a SOL amount is valued at SOL_PRICE_USD', async (t) => {
    const user = await newUser();
    const agentId = await followable();
    const res = await follow(user, { agentId, allocationMode: 'SOL_AMOUNT', allocationAmountSol: 2.5 });
    t.equal(res.status, 200);
    t.match(res.body.data.subscription, { allocationMode: 'SOL_AMOUNT', allocationAmountSol: 2.5, allocatedUsd: 375 });
    t.notOk('allocationAmountUsd' in res.body.data.subscription, 'only the fields of the chosen mode');
  });

  await t.test('a percentage range takes its maximum (or its minimum alone) of the wallet balance', async (t) => {
    const user = await newUser();
    const first = await follow(user, {
      agentId: await followable(),
      allocationMode: 'PERCENTAGE_RANGE',
      allocationPercentageMin: 5,
      allocationPercentageMax: 12.5,
    });
    t.match(first.body.data.subscription, {
      allocationMode: 'PERCENTAGE_RANGE',
      allocationPercentageMin: 5,
      allocationPercentageMax: 12.5,
      allocatedUsd: 1250,
    });
    const second = await follow(user, { agentId: await followable(), allocationPercentageMin: 10 });
    t.match(second.body.data.subscription, { allocationMode: 'PERCENTAGE_RANGE', allocatedUsd: 875 }, '10% of the 8750 left');
    const all = await follow(user, { agentId: await followable(), allocationPercentageMax: 100 });
    t.equal(all.body.data.subscription.allocatedUsd, 7875, '100% is everything left, to the micro-USD');
    t.equal(await virtualBalance(app, user), 0);
  });

  await t.test('the deprecated aliases subscriptionType and walletMode are accepted', async (t) => {
    const user = await newUser();
    const agentId = await followable();
    const res = await follow(user, { agentId, subscriptionType: 'ALERTS_ONLY', walletMode: 'VIRTUAL', allocationAmountUsd: 30 });
    t.equal(res.status, 200);
    t.match(res.body.data.subscription, { tradeMode: 'ALERTS_ONLY', subscriptionType: 'ALERTS_ONLY', walletContext: 'virtual', walletMode: 'VIRTUAL' });
  });

  await t.test('an alias that contradicts its field is a 400', async (t) => {
    const user = await newUser();
    const agentId = await followable();
    const res = await follow(user, { agentId, tradeMode: 'AUTO_TRADING', subscriptionType: 'ALERTS_ONLY', walletContext: 'virtual', walletMode: 'REAL' });
    t.equal(res.status, 400);
    t.match(res.body.error.message, /subscriptionType.*differs from tradeMode.*, .*walletMode.*differs from walletContext/);
    t.same(await mine(user), []);
  });

  await t.test('invalid bodies are 400 with every message', async (t) => {
    const user = await newUser();
    const missing = await follow(user, { allocationMode: 'USD_AMOUNT' });
    t.equal(missing.status, 400);
    t.match(missing.body.error.message, /agentId/);
    const noAmount = await follow(user, { agentId: 'a', allocationMode: 'USD_AMOUNT', allocationAmountUsd: -5 });
    t.equal(noAmount.status, 400);
    t.match(noAmount.body.error.message, /allocationAmountUsd must be positive/);
    const ambiguous = await follow(user, { agentId: 'a', allocationAmountUsd: 10, allocationAmountSol: 1 });
    t.match(ambiguous.body.error.message, /allocationMode is required/);
    const range = await follow(user, { agentId: 'a', allocationPercentageMin: 20, allocationPercentageMax: 10 });
    t.match(range.body.error.message, /must not exceed allocationPercentageMax/);
  });

  await t.test('following again updates the same row and tops the pool up, never down', async (t) => {
    const user = await newUser();
    const agentId = await followable();
    await follow(user, { agentId, allocationAmountUsd: 100 });
    const again = await follow(user, { agentId, allocationAmountUsd: 300, isPaused: true, tradeMode: 'TEST_TRADING' });
    t.equal(again.status, 200);
    t.equal(again.body.data.message, 'Subscription to Momentum Scalper updated');
    t.match(again.body.data.subscription, { allocatedUsd: 300, allocationAmountUsd: 300, isPaused: true, tradeMode: 'TEST_TRADING' });
    const lower = await follow(user, { agentId, allocationAmountUsd: 50 });
    t.match(
      lower.body.data.subscription,
      { allocatedUsd: 300, allocationAmountUsd: 50, isPaused: true },
      'a lower target withdraws nothing; omitted settings stay',
    );
    const list = await mine(user);
    t.equal(list.length, 1, 'one row per user, agent and wallet context');
    t.equal(await virtualBalance(app, user), 10_000_000_000 - 300_000_000);
  });

  await t.test('a first follow without an allocation takes the agent minimum', async (t) => {
    const user = await newUser();
    const res = await follow(user, { agentId: await followable() });
    t.match(res.body.data.subscription, { allocationMode: 'USD_AMOUNT', allocationAmountUsd: 25.5, allocatedUsd: 25.5, tradeMode: 'AUTO_TRADING' });
  });

  await t.test('more than the wallet holds is a 400 naming the available balance', async (t) => {
    const user = await newUser();
    const agentId = await followable();
    await follow(user, { agentId: await followable(), allocationAmountUsd: 4000.5 });
    const res = await follow(user, { agentId, allocationAmountUsd: 6000 });
    t.equal(res.status, 400);
    t.equal(res.body.error.code, 'BAD_REQUEST');
    t.match(res.body.error.message, /5999\.5 USD available/);
    t.equal(res.body.error.availableUsd, 5999.5);
    t.equal((await mine(user)).length, 1, 'no pool for the refused follow');
  });

  await t.test('below the agent minimum is a 400 naming the minimum', async (t) => {
    const user = await newUser();
    const res = await follow(user, { agentId: await followable(), allocationAmountUsd: 25.49 });
    t.equal(res.status, 400);
    t.match(res.body.error.message, /minimum allocation of 25\.5 USD/);
    t.equal(await virtualBalance(app, user), 0, 'the wallet was never touched');
  });

  await t.test('the real context has no funds yet: a clear 400', async (t) => {
    const user = await newUser();
    const agentId = await followable();
    const res = await follow(user, { agentId, walletContext: 'real', allocationAmountUsd: 100 });
    t.equal(res.status, 400);
    t.match(res.body.error.message, /real wallet has no funds/);
  });

  await t.test("without walletContext the user's current context is used", async (t) => {
    const user = await newUser();
    const agentId = await followable();
    const patched = await api(app, 'PATCH', '/api/v1/users/me', { token: user.accessToken, body: { virtualWalletMode: false } });
    t.equal(patched.status, 200);
    const res = await follow(user, { agentId, allocationAmountUsd: 100 });
    t.equal(res.status, 400);
    t.match(res.body.error.message, /real wallet has no funds/, 'a user in the real context follows from the real wallet');
  });

  await t.test('an unknown agent is 404, an unapproved one 409', async (t) => {
    const user = await newUser();
    const unknown = await follow(user, { agentId: 'no-such-agent' });
    t.equal(unknown.status, 404);
    t.equal(unknown.body.error.code, 'NOT_FOUND');
    const pending = await follow(user, { agentId: await listAgent() });
    t.equal(pending.status, 409);
    t.match(pending.body.error.message, /pending-review/);
  });

  await t.test('a full beta is 409; a seat holder can still follow again', async (t) => {
    const agentId = await followable({ maxBetaUsers: 1 });
    const first = await newUser();
    const second = await newUser();
    t.equal((await follow(first, { agentId, allocationAmountUsd: 30 })).status, 200);
    const full = await follow(second, { agentId, allocationAmountUsd: 30 });
    t.equal(full.status, 409);
    t.match(full.body.error.message, /beta seats/);
    t.equal(await virtualBalance(app, second), 0, 'the refused follower paid nothing');
    t.equal((await follow(first, { agentId, allocationAmountUsd: 60 })).status, 200);
  });

  await t.test('a beta pool opened with nothing to move holds its seat all the same', async (t) => {
    const agentId = await followable({ maxBetaUsers: 1, minAllocationUsd: 0 });
    const first = await newUser();
    const second = await newUser();
    const opened = await follow(first, { agentId });
    t.equal(opened.status, 200, 'the agent asks for no capital: the pool opens empty');
    t.equal(opened.body.data.allocatedUsd ?? 0, 0);
    t.same(await seatHolders(app, agentId), [first.userId], 'the opening took the seat');
    const full = await follow(second, { agentId });
    t.equal(full.status, 409, 'the only seat is held');
    t.equal(full.body.error.reason, 'BETA_FULL');
    t.same(await seatHolders(app, agentId), [first.userId], 'the refused follow took nothing');
    t.equal((await follow(first, { agentId, tradeMode: 'ALERTS_ONLY' })).status, 200, 'the holder changes its settings');
    t.same(await seatHolders(app, agentId), [first.userId], 'with one seat still');
  });

  await t.test('concurrent follows of different agents never spend the same dollar', async (t) => {
    const user = await newUser();
    const agents = await Promise.all(Array.from({ length: 5 }, () => followable()));
    const results = await Promise.all(agents.map((agentId) => follow(user, { agentId, allocationAmountUsd: 3000 })));
    const statuses = results.map((r) => r.status);
    t.equal(statuses.filter((s) => s === 200).length, 3, 'three of 3000 fit in 10000');
    t.equal(statuses.filter((s) => s === 400).length, 2, 'the others are refused for funds');
    for (const r of results.filter((r) => r.status === 400)) t.match(r.body.error.message, /1000 USD available/);
    t.equal(await virtualBalance(app, user), 1_000_000_000);
    const list = await mine(user);
    t.equal(
      list.reduce((sum, s) => sum + s.allocatedUsd, 0),
      9000,
    );
  });
});
