// A user following a perpetuals agent whose signal opened one trade in the user's pool, made
// through the real routes and signal webhook, for the MCP tool tests. Needs an app started with
// ADMIN_EMAILS including `admin@example.test`.
import { signWebhookBody } from '../../../infra/signing/webhook.ts';
import { api, type TestApp } from '../../support/app.ts';
import { listedFollowableAgent } from '../../support/agents.ts';
import { signIn, type SignedIn } from '../../support/auth.ts';
import { until } from '../../support/until.ts';

export interface Trading {
  admin: SignedIn;
  dev: SignedIn;
  user: SignedIn;
  agentId: string;
  /** the signal that opened the trade */
  signalId: string;
  tradeId: string;
  /** sets the venue's BTC price (USD) */
  setPrice(btc: number): Promise<void>;
  /** delivers a signed signal of the agent that opens one trade in the user's pool; its trade id */
  open(body: Record<string, unknown>): Promise<string>;
}

export async function tradingUser(app: TestApp, prefix: string): Promise<Trading> {
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, `${prefix}-dev@example.test`);
  const user = await signIn(app, `${prefix}-user@example.test`);
  const must = (what: string, res: { status: number; body: any }) => {
    if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const setPrice = async (btc: number) =>
    void must('price', await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { BTC: btc } } }));
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  const { agentId, secret } = await listedFollowableAgent(
    app,
    tokens,
    { name: `${prefix} perp`, venue: 'PERP_VENUE', maxLeverage: 10, minTradeUsd: 1 },
    { live: true },
  );
  await setPrice(50_000);
  must('follow', await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId, allocationAmountUsd: 1000 } }));
  // The fan-out reads followers from the subscriptions read model: this read waits for it.
  await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
  const open = async (body: Record<string, unknown>) => {
    const signed = signWebhookBody({ secret, body, timestampMs: Date.now() });
    const headers = { 'x-svc-timestamp': signed.timestampHeader, 'x-svc-signature': signed.signatureHeader };
    const opened = must('signal', await api(app, 'POST', `/api/v1/signals/${agentId}`, { body, headers }));
    const [tradeId] = opened.data.executionResults.flatMap((r: { executionResult: { tradeIds: string[] } }) => r.executionResult.tradeIds) as string[];
    if (!tradeId) throw new Error(`no trade opened: ${JSON.stringify(opened)}`);
    // The webhook's caller is the agent, not the user: the trades read model shows the trade a moment later.
    await until('the trade to be listed', async () =>
      (await api(app, 'GET', '/api/v1/trades?limit=100', { token: user.accessToken })).body.data.items.some((i: { id: string }) => i.id === tradeId),
    );
    return tradeId;
  };
  const signalId = `${prefix}-long-1`;
  const tradeId = await open({ signalId, action: 'open', side: 'long', token: 'BTC', leverage: 2, sizeUsd: 20 });
  return { admin, dev, user, agentId, signalId, tradeId, setPrice, open };
}
