// MCP money tools: a first call previews (nothing moves) and answers a single-use confirmation
// handle; the same call with the handle moves the money once. Real PostgreSQL, Redis and
// dispatcher; the tools are called as the transport calls them (tool.run with the caller's context).
import t from 'tap';
import type { z } from 'zod';
import { moneyTools } from '../../../api/mcp/tools/money.ts';
import type { McpTool } from '../../../api/mcp/tool.ts';
import { poolDecider } from '../../../domain/pool/decide.ts';
import { ledgerTermsOf, poolFigures } from '../../../domain/pool/ledger.ts';
import { poolId } from '../../../domain/pool/state.ts';
import type { DomainError } from '../../../domain/shared/errors.ts';
import { walletDecider } from '../../../domain/wallet/decide.ts';
import { balanceOf } from '../../../domain/wallet/state.ts';
import type { Clock } from '../../../infra/clock.ts';
import { api, dispatch, loadState, startTestApp } from '../../support/app.ts';
import { followableAgent } from '../../support/agents.ts';
import { signIn, type SignedIn } from '../../support/auth.ts';
import { refusal, toolContext } from '../../support/mcp-tool-context.ts';

const START_MICRO = 10_000_000_000;
const TTL_SECONDS = 300;

let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };

const toolNamed = (name: string) => {
  const tool = moneyTools.find((m) => m.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool as McpTool<z.ZodObject<any>, (typeof moneyTools)[number]['output']>;
};

t.test('money tools move money only after a preview', async (t) => {
  const app = await startTestApp({ clock, config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  let n = 0;
  const agent = () =>
    followableAgent(
      app,
      { developer: dev.accessToken, admin: admin.accessToken },
      { name: `Money ${++n}`, venue: 'SPOT_VENUE', minAllocationUsd: 10 },
      { live: true },
    );
  /** A new user following a new agent with 100 USD (through REST), and the agent. */
  const follower = async () => {
    const user = await signIn(app, `money${++n}@example.test`);
    const agentId = await agent();
    const followed = await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } });
    if (followed.status !== 200) throw new Error(JSON.stringify(followed.body));
    return { user, agentId };
  };
  const call = (name: string, user: SignedIn, input: Record<string, unknown>) =>
    toolNamed(name).run(toolContext(app, user), toolNamed(name).input.parse(input));
  const walletMicro = async (u: SignedIn) => balanceOf((await loadState(app, walletDecider, u.userId)).state, 'virtual', START_MICRO);
  const pool = async (u: SignedIn, agentId: string) => {
    const loaded = await loadState(app, poolDecider, poolId(u.userId, agentId, 'virtual'));
    const { state } = loaded;
    return { revision: loaded.revision, allocated: state.followed ? poolFigures(state.ledger, ledgerTermsOf(state)).allocatedUsd : 0 };
  };

  await t.test('a withdrawal preview shows the amounts and moves nothing; its confirmation moves it once', async (t) => {
    const { user, agentId } = await follower();
    const [walletBefore, poolBefore] = [await walletMicro(user), await pool(user, agentId)];
    const previewed = await call('withdraw_allocation', user, { agentId, amountUsd: 30.25 });
    t.equal(previewed.status, 'preview');
    t.match(previewed.preview, {
      walletContext: 'virtual',
      moves: [{ from: `pool of agent ${agentId}`, to: 'virtual wallet', amountUsd: 30.25 }],
      fees: [],
      feesUsd: 0,
      after: { walletBalanceUsd: 9930.25, poolAllocatedUsd: 69.75, poolWithdrawableUsd: 69.75 },
      pendingAtVenue: false,
      refusal: null,
    });
    t.match(previewed.confirmation, { handle: String, expiresAt: String });
    t.equal(Date.parse(previewed.confirmation!.expiresAt) - clock.now().getTime() <= TTL_SECONDS * 1000, true, 'expires within the TTL');
    t.equal(await walletMicro(user), walletBefore, 'the preview moved nothing out of the wallet');
    t.same(await pool(user, agentId), poolBefore, 'the preview appended nothing to the pool');

    const done = await call('withdraw_allocation', user, { agentId, amountUsd: 30.25, confirmationHandle: previewed.confirmation!.handle });
    t.equal(done.status, 'done');
    t.match(done.result, { message: /Withdrew 30.25 USD/, subscription: { allocatedUsd: 69.75 } });
    t.equal(await walletMicro(user), walletBefore + 30_250_000);
    t.equal(
      await refusal(call('withdraw_allocation', user, { agentId, amountUsd: 30.25, confirmationHandle: previewed.confirmation!.handle })),
      'CONFIRMATION_INVALID',
      'a handle works once',
    );
    t.equal(await walletMicro(user), walletBefore + 30_250_000);
  });

  await t.test('twenty parallel confirmations of one handle move the money once', async (t) => {
    const { user, agentId } = await follower();
    const walletBefore = await walletMicro(user);
    const { confirmation } = await call('add_allocation', user, { agentId, amountUsd: 12.345678 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () => call('add_allocation', user, { agentId, amountUsd: 12.345678, confirmationHandle: confirmation!.handle })),
    );
    const done = outcomes.filter((o) => o.status === 'fulfilled');
    const reasons = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as DomainError).reason] : []));
    t.equal(done.length, 1, 'one confirmation moved the money');
    t.same(reasons, Array(19).fill('CONFIRMATION_INVALID'), 'the other 19 are refused');
    t.equal(await walletMicro(user), walletBefore - 12_345_678, 'the wallet paid once, to the micro-dollar');
    t.equal((await pool(user, agentId)).allocated, 100_000_000 + 12_345_678, 'the pool got it once');
    t.equal((await walletMicro(user)) + (await pool(user, agentId)).allocated, START_MICRO, 'wallet + pool = the start');
  });

  await t.test("an expired, tampered, another user's or another tool's handle is refused and nothing moves", async (t) => {
    const { user, agentId } = await follower();
    const other = await follower();
    const snapshot = async () => [await walletMicro(user), await pool(user, agentId), await walletMicro(other.user)];
    const before = await snapshot();
    const handleFor = async () => (await call('withdraw_allocation', user, { agentId, amountUsd: 10 })).confirmation!.handle;

    const expiring = await handleFor();
    offsetMs = (TTL_SECONDS + 1) * 1000;
    t.teardown(() => (offsetMs = 0));
    t.equal(await refusal(call('withdraw_allocation', user, { agentId, amountUsd: 10, confirmationHandle: expiring })), 'CONFIRMATION_EXPIRED');
    offsetMs = 0;
    t.equal(
      await refusal(call('withdraw_allocation', user, { agentId, amountUsd: 10, confirmationHandle: expiring })),
      'CONFIRMATION_INVALID',
      'an expired handle is gone',
    );

    const handle = await handleFor();
    t.equal(
      await refusal(call('withdraw_allocation', user, { agentId, amountUsd: 11, confirmationHandle: handle })),
      'CONFIRMATION_MISMATCH',
      'other arguments',
    );
    t.equal(
      await refusal(call('withdraw_allocation', user, { agentId, amountUsd: 10, walletContext: 'virtual', confirmationHandle: handle })),
      'CONFIRMATION_MISMATCH',
      'an added argument',
    );
    t.equal(
      await refusal(call('withdraw_allocation', other.user, { agentId, amountUsd: 10, confirmationHandle: handle })),
      'CONFIRMATION_INVALID',
      "another user's",
    );
    t.equal(await refusal(call('add_allocation', user, { agentId, amountUsd: 10, confirmationHandle: handle })), 'CONFIRMATION_INVALID', "another tool's");
    t.equal(
      await refusal(call('withdraw_allocation', user, { agentId, amountUsd: 10, confirmationHandle: `${handle}x` })),
      'CONFIRMATION_INVALID',
      'a forged one',
    );
    t.same(await snapshot(), before, 'nothing moved');
    const done = await call('withdraw_allocation', user, { agentId, amountUsd: 10, confirmationHandle: handle });
    t.equal(done.status, 'done', "refused attempts by others do not burn the owner's handle");
  });

  await t.test('a preview of a move that would be refused shows the refusal and gives no handle', async (t) => {
    const { user, agentId } = await follower();
    const tooMuch = await call('withdraw_allocation', user, { agentId, amountUsd: 100.01 });
    t.match(tooMuch, {
      status: 'preview',
      confirmation: null,
      preview: { refusal: { code: 'BAD_REQUEST', reason: 'EXCEEDS_WITHDRAWABLE', message: /at most 100 USD/ }, moves: [] },
    });
    const broke = await call('add_allocation', user, { agentId, amountUsd: 10_000 });
    t.match(broke.preview?.refusal, { reason: 'INSUFFICIENT_FUNDS' });
    const notFollowed = await call('stop_following', user, { agentId: await agent() });
    t.match(notFollowed.preview?.refusal, { reason: 'SUBSCRIPTION_NOT_FOUND' });
    t.equal((await pool(user, agentId)).allocated, 100_000_000, 'nothing moved');
  });

  await t.test('follow and stop following are previewed; pause and resume move no money and apply at once', async (t) => {
    const user = await signIn(app, `money${++n}@example.test`);
    const agentId = await agent();
    const previewed = await call('follow_agent', user, { agentId, allocationAmountUsd: 40 });
    t.match(previewed.preview, {
      moves: [{ to: `pool of agent ${agentId}`, amountUsd: 40 }],
      after: { walletBalanceUsd: 9960, poolAllocatedUsd: 40 },
      refusal: null,
    });
    t.equal(await walletMicro(user), START_MICRO, 'nothing moved');
    const followed = await call('follow_agent', user, { agentId, allocationAmountUsd: 40, confirmationHandle: previewed.confirmation!.handle });
    t.match(followed.result, { message: /Now following/, subscription: { allocatedUsd: 40, isPaused: false } });

    const paused = await call('pause_following', user, { agentId });
    t.match(paused, { status: 'done', preview: { moves: [] }, result: { subscription: { isPaused: true } } });
    const resumed = await call('resume_following', user, { agentId });
    t.match(resumed, { status: 'done', result: { subscription: { isPaused: false } } });

    const stop = await call('stop_following', user, { agentId });
    t.match(stop.preview, { moves: [{ from: `pool of agent ${agentId}`, amountUsd: 40 }], after: { walletBalanceUsd: 10_000 } });
    t.equal(await walletMicro(user), START_MICRO - 40_000_000, 'the stop preview moved nothing');
    const stopped = await call('stop_following', user, { agentId, confirmationHandle: stop.confirmation!.handle });
    t.match(stopped.result, { message: /40 USD returned/ });
    t.equal(await walletMicro(user), START_MICRO);
  });

  await t.test('a wallet buy and sell are previewed at the venue price and made once on confirmation', async (t) => {
    const user = await signIn(app, `money${++n}@example.test`);
    await dispatch(app, 'SetMarketPrices', { prices: { BONK: 2_000_000n * 10n ** 12n } });
    const buy = await call('wallet_buy', user, { mint: 'BONK', amountUsd: 50 });
    t.match(buy.preview, {
      summary: /about 25 BONK at 2 USD each/,
      moves: [{ from: 'virtual wallet', to: 'manual lots of BONK', amountUsd: 50 }],
      after: { walletBalanceUsd: 9950 },
      refusal: null,
    });
    t.equal(await walletMicro(user), START_MICRO, 'the buy preview moved nothing');
    const confirmations = await Promise.allSettled(
      Array.from({ length: 5 }, () => call('wallet_buy', user, { mint: 'BONK', amountUsd: 50, confirmationHandle: buy.confirmation!.handle })),
    );
    t.equal(confirmations.filter((c) => c.status === 'fulfilled').length, 1, 'one buy');
    t.equal(await walletMicro(user), START_MICRO - 50_000_000);
    const tooMany = await call('wallet_sell', user, { mint: 'BONK', amount: 26 });
    t.match(tooMany, { confirmation: null, preview: { refusal: { reason: 'SELL_EXCEEDS_MANUAL_POSITION' } } });
    const sell = await call('wallet_sell', user, { mint: 'BONK', amount: 10 });
    t.match(sell.preview, { moves: [{ from: 'manual lots of BONK', amountUsd: 20 }], after: { walletBalanceUsd: 9970 } });
    const sold = await call('wallet_sell', user, { mint: 'BONK', amount: 10, confirmationHandle: sell.confirmation!.handle });
    t.match(sold.result, { message: /Sold 10 BONK for 20 USD/ });
    t.equal(await walletMicro(user), START_MICRO - 30_000_000);
  });
});
