// Creator fees earned through the real routes, for the fee claim tests: a follower's real pool makes
// a profit and withdraws, the venue confirms the withdrawal, and the pool settles its success fee
// (docs/domain-rules.md, "Pool ledger"). Needs an app started with ADMIN_EMAILS naming the
// administrator, VENUE_SIM_CHAIN_MS 0 and a short RECONCILIATION_INTERVAL_MS.
import { feesSettledSchema } from '../../domain/pool/events.ts';
import { poolId, poolStream } from '../../domain/pool/state.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';
import { api, dispatch, type TestApp } from './app.ts';
import type { SignedIn } from './auth.ts';
import { until } from './until.ts';

const SUBS = '/api/v1/users/me/subscriptions';
const M = 1_000_000;

async function call(app: Pick<TestApp, 'url'>, method: string, path: string, token: string, body?: unknown) {
  const res = await api(app, method, path, { token, body });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** The creator's share of every fee the pool stream settled, in micro-USD. */
export async function creatorFeesOf(app: Pick<TestApp, 'deps'>, pool: string): Promise<number> {
  const events = await app.deps.store.readStream(poolStream(pool));
  return events.filter((e) => e.type === 'FeesSettled').reduce((sum, e) => sum + feesSettledSchema.parse(e.data).creatorMicro, 0);
}

/**
 * `follower` follows `agentId` (20 % success fee) in the real context with 300 USD, realizes
 * `profitUsd` and withdraws 20 USD: once the venue confirms it, the pool settles the fee, of which
 * the creator gets 80 %. Answers the pool id and the creator's fees the pool settled so far.
 */
export async function earnFees(app: TestApp, admin: SignedIn, follower: SignedIn, agentId: string, profitUsd: number, tradeId: string) {
  const pool = poolId(follower.userId, agentId, 'real');
  const before = await creatorFeesOf(app, pool);
  await call(app, 'POST', `/api/admin/wallets/${follower.userId}/deposit`, admin.accessToken, { amountUsd: 300 });
  await call(app, 'POST', SUBS, follower.accessToken, { agentId, walletContext: 'real', allocationAmountUsd: 300 });
  await until('the real add confirmed', async () => {
    const rows = (await call(app, 'GET', `${SUBS}?walletContext=real`, follower.accessToken)) as Array<{ agent: string; allocatedUsd: number }>;
    return rows.find((r) => r.agent === agentId)?.allocatedUsd === 300;
  });
  await dispatch(app, 'RecordPoolFact', { poolId: pool, fact: { type: 'OpenTrade', data: oneTrade(tradeId, 100 * M) } });
  await dispatch(app, 'RecordPoolFact', { poolId: pool, fact: { type: 'CloseTrade', data: { tradeId, realizedPnlMicro: profitUsd * M } } });
  await call(app, 'POST', `${SUBS}/${agentId}/allocation/withdraw`, follower.accessToken, { amountUsd: 20, walletContext: 'real' });
  const earned = await until('the withdrawal confirmed and its fee settled', async () => {
    const now = await creatorFeesOf(app, pool);
    return now > before ? now : false;
  });
  return { pool, earnedMicro: earned };
}
