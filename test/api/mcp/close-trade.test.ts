// The close_trade money tool: a preview dry-decides the close at the venue's price now (what
// returns to the pool, the exit fee, the PnL) and moves nothing; the same call with the handle
// closes the trade once. Real PostgreSQL, Redis, dispatcher and signal webhook; the tool is called
// as the transport calls it (tool.run with the caller's context).
import t from 'tap';
import type { z } from 'zod';
import { moneyTools } from '../../../api/mcp/tools/money.ts';
import type { McpTool } from '../../../api/mcp/tool.ts';
import { poolDecider } from '../../../domain/pool/decide.ts';
import { poolId } from '../../../domain/pool/state.ts';
import type { DomainError } from '../../../domain/shared/errors.ts';
import { usdToMicro } from '../../../domain/shared/money.ts';
import { tradeDecider } from '../../../domain/trade/decide.ts';
import { api, loadState, startTestApp } from '../../support/app.ts';
import { signIn, type SignedIn } from '../../support/auth.ts';
import { toolContext } from '../../support/mcp-tool-context.ts';
import { tradingUser } from './trading.ts';

const closeTrade = moneyTools.find((m) => m.name === 'close_trade') as McpTool<z.ZodObject<any>, (typeof moneyTools)[number]['output']>;

t.test('close_trade previews the close at the mark and closes once on confirmation', async (t) => {
  t.ok(closeTrade, 'close_trade is a money tool');
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const trading = await tradingUser(app, 'close');
  const { user, agentId, tradeId, setPrice } = trading;
  const stranger = await signIn(app, 'close-stranger@example.test');
  const before = (await loadState(app, tradeDecider, tradeId)).state;
  t.match(before, { status: 'open', marginMicro: 20_000_000 });
  await setPrice(55_000);

  const call = (who: SignedIn, input: Record<string, unknown>) => closeTrade.run(toolContext(app, who), closeTrade.input.parse(input));
  const pool = poolId(user.userId, agentId, 'virtual');
  const ledger = async () => {
    const { state } = await loadState(app, poolDecider, pool);
    if (!state.followed) throw new Error('not followed');
    return state.ledger;
  };
  const ledgerBefore = await ledger();

  const previewed = await call(user, { id: tradeId });
  t.match(previewed, {
    status: 'preview',
    confirmation: { handle: String },
    preview: { walletContext: 'virtual', refusal: null, moves: [{ from: `trade ${tradeId}`, to: `pool of agent ${agentId}` }] },
  });
  const preview = previewed.preview!;
  t.ok(preview.realizedPnlUsd! > 3 && preview.realizedPnlUsd! < 4, `a 10 % rise at 2x on 20 USD, less fees: ${preview.realizedPnlUsd}`);
  t.equal(usdToMicro(preview.moves[0]!.amountUsd), 20_000_000 + usdToMicro(preview.realizedPnlUsd!), 'the margin and the PnL return to the pool');
  t.ok(preview.feesUsd > 0, 'the exit fee');
  t.same((await loadState(app, tradeDecider, tradeId)).state, before, 'the preview closed nothing');
  t.same(await ledger(), ledgerBefore, 'the pool did not move');

  const foreign = await call(stranger, { id: tradeId });
  t.match(foreign, { confirmation: null, preview: { refusal: { reason: 'TRADE_NOT_FOUND' } } }, "another user's trade is not theirs to preview");
  t.match((await call(user, { id: 'no-such-trade' })).preview?.refusal, { reason: 'TRADE_NOT_FOUND' });

  const closed = await call(user, { id: tradeId, confirmationHandle: previewed.confirmation!.handle });
  t.match(closed, { status: 'done', result: { message: /is closed/, trade: { id: tradeId, status: 'closed', closeReason: 'USER' } } });
  const after = (await loadState(app, tradeDecider, tradeId)).state;
  t.match(after, { status: 'closed' });
  if (after.status !== 'closed') return;
  t.equal(after.realizedPnlMicro, usdToMicro(preview.realizedPnlUsd!), 'the PnL previewed at an unchanged price, to the micro-dollar');
  t.equal(after.feesPaidMicro - (before.status === 'open' ? before.feesPaidMicro : 0), usdToMicro(preview.feesUsd), 'the exit fee previewed');
  const ledgerAfter = await ledger();
  t.equal(ledgerAfter.locked, 0, 'the margin is released');
  t.equal(ledgerAfter.realized - ledgerBefore.realized, usdToMicro(preview.realizedPnlUsd!), 'the pool realized the previewed PnL');
  const [record] = (await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken })).body.data;
  t.match(preview.after, { poolAllocatedUsd: record.allocatedUsd, poolWithdrawableUsd: record.withdrawableUsd }, "the pool's figures previewed");
  t.ok(preview.after.poolWithdrawableUsd! > 1000 - 20, 'the margin is withdrawable again');

  try {
    await call(user, { id: tradeId, confirmationHandle: previewed.confirmation!.handle });
    t.fail('a used handle closes nothing');
  } catch (err) {
    t.equal((err as DomainError).reason, 'CONFIRMATION_INVALID');
  }
  t.match((await call(user, { id: tradeId })).preview?.refusal, { reason: 'TRADE_CLOSED' }, 'a closed trade has nothing to preview');

  const pending = await trading.open({
    signalId: 'close-zone-1',
    action: 'open',
    side: 'long',
    token: 'BTC',
    leverage: 2,
    sizeUsd: 10,
    entry: [40_000, 45_000],
  });
  t.match((await loadState(app, tradeDecider, pending)).state, { status: 'pending' });
  const cancel = await call(user, { id: pending });
  t.match(
    cancel.preview,
    { summary: /cancel its pending entry/, moves: [{ amountUsd: 10 }], fees: [], realizedPnlUsd: 0, refusal: null },
    'a pending entry returns its margin whole',
  );
  const cancelled = await call(user, { id: pending, confirmationHandle: cancel.confirmation!.handle });
  t.match(cancelled.result, { trade: { id: pending, status: 'cancelled' } });
});
