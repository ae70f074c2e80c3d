// Text follow-ups through the signed webhook: a channel's management message about a token manages
// the open trade on it, and without one it is skipped NO_MATCHING_TRADE (never unmatched, never a guess).
// The follower trades in FULL_TRADING, the mode that applies an agent's management of open trades.
import t from 'tap';
import { tradeDecider } from '../../domain/trade/decide.ts';
import { signWebhookBody } from '../../infra/signing/webhook.ts';
import { listedFollowableAgent } from '../support/agents.ts';
import { api, loadState, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

const ADMIN = 'admin@example.test';

t.test('a management follow-up about a token: skipped NO_MATCHING_TRADE without an open trade, applied to it with one', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'followup-dev@example.test');
  const user = await signIn(app, 'followup-user@example.test');
  const { agentId, secret } = await listedFollowableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    { name: 'Follow-ups', venue: 'PERP_VENUE', maxLeverage: 5, minTradeUsd: 1 },
  );
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { SOL: 150 } } })).status, 200);
  t.equal(
    (
      await api(app, 'POST', '/api/v1/users/me/subscriptions', {
        token: user.accessToken,
        body: { agentId, allocationAmountUsd: 1000, tradeMode: 'FULL_TRADING' },
      })
    ).status,
    200,
  );
  await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
  const deliver = (body: unknown) => {
    const signed = signWebhookBody({ secret, body, timestampMs: Date.now() });
    return api(app, 'POST', `/api/v1/signals/${agentId}`, {
      body,
      headers: { 'x-svc-timestamp': signed.timestampHeader, 'x-svc-signature': signed.signatureHeader },
    });
  };
  const followUp = 'TP1 reached on #SOL 🎯 closing 25% and moving stop to breakeven';

  const early = await deliver({ signalId: 'sol-mgmt-early', text: followUp });
  t.equal(early.status, 200, JSON.stringify(early.body));
  t.equal(early.body.data.outcome, 'skipped', JSON.stringify(early.body.data));
  t.match(early.body.data.executionResults, [{ executionResult: { status: 'skipped', skipReason: 'NO_MATCHING_TRADE' } }]);

  // No side named: the targets above the entry make it a long.
  const opened = await deliver({ signalId: 'sol-open', text: '#SOL 🚀\nEntry 149-151\nTP 160 / 170\nSL 140' });
  t.equal(opened.status, 200, JSON.stringify(opened.body));
  t.equal(opened.body.data.outcome, 'executed', JSON.stringify(opened.body.data));
  const tradeId = opened.body.data.executionResults[0].executionResult.tradeIds[0] as string;
  const before = (await loadState(app, tradeDecider, tradeId)).state;
  if (before.status !== 'open') throw new Error(`not open: ${before.status}`);
  t.equal(before.side, 'long');

  const managed = await deliver({ signalId: 'sol-mgmt', text: followUp });
  t.equal(managed.status, 200, JSON.stringify(managed.body));
  t.equal(managed.body.data.outcome, 'executed', JSON.stringify(managed.body.data));
  const after = (await loadState(app, tradeDecider, tradeId)).state;
  if (after.status !== 'open') throw new Error(`not open: ${after.status}`);
  t.equal(after.remainingUnits, before.filledUnits - before.filledUnits / 4n, 'a quarter of the filled size is closed');
  t.ok(after.stop !== null && after.stop.price > before.averageFill!, `the stop moved to breakeven, above the fill (${after.stop?.price})`);

  const out = await deliver({ signalId: 'sol-out', text: "Sold the remaining $SOL bag, we're out 👋" });
  t.equal(out.body.data.outcome, 'executed', JSON.stringify(out.body.data));
  t.equal((await loadState(app, tradeDecider, tradeId)).state.status, 'closed');
});
