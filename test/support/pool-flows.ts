// Pools with varied histories, made through the real routes and dispatcher, for the auditors' tests:
// adds, withdrawals, trades, settings changes, a stop, a reopened pool, a real perp pool pending at
// the venue with a venue observation.
import { poolId } from '../../domain/pool/state.ts';
import { api, dispatch, type TestApp } from './app.ts';
import { followableAgent } from './agents.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';
import { signIn, type SignedIn } from './auth.ts';

const SUBS = '/api/v1/users/me/subscriptions';

export interface PoolFlows {
  admin: SignedIn;
  users: SignedIn[];
  spotAgent: string;
  perpAgent: string;
  /** every pool the flows made: followed ones, a stopped one, a reopened one, a real one */
  pools: { trading: string; stopped: string; reopened: string; real: string };
}

/** Needs an app started with ADMIN_EMAILS including `admin@example.test`. */
export async function poolFlows(app: TestApp, prefix = 'flow'): Promise<PoolFlows> {
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await api(app, method, path, { token, body });
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, `${prefix}-dev@example.test`);
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  const spotAgent = await followableAgent(app, tokens, { name: `${prefix} spot`, venue: 'SPOT_VENUE', successFeePercent: 20 }, { live: true });
  const perpAgent = await followableAgent(app, tokens, { name: `${prefix} perp`, venue: 'PERP_VENUE', maxLeverage: 5, successFeePercent: 10 }, { live: true });
  const users = [];
  for (const n of [1, 2, 3]) users.push(await signIn(app, `${prefix}-user${n}@example.test`));
  const [u1, u2, u3] = users as [SignedIn, SignedIn, SignedIn];

  const trading = poolId(u1.userId, spotAgent, 'virtual');
  await call('POST', SUBS, u1.accessToken, { agentId: spotAgent, allocationAmountUsd: 100 });
  await call('POST', `${SUBS}/${spotAgent}/allocation/add`, u1.accessToken, { amountUsd: 50 });
  await dispatch(app, 'RecordPoolFact', { poolId: trading, fact: { type: 'OpenTrade', data: oneTrade('tr-1', 40_000_000) } });
  await dispatch(app, 'RecordPoolFact', { poolId: trading, fact: { type: 'MarkTrade', data: { tradeId: 'tr-1', unrealizedPnlMicro: -2_500_000 } } });
  await dispatch(app, 'RecordPoolFact', { poolId: trading, fact: { type: 'CloseTrade', data: { tradeId: 'tr-1', realizedPnlMicro: 9_999_999 } } });
  await dispatch(app, 'RecordPoolFact', { poolId: trading, fact: { type: 'OpenTrade', data: oneTrade('tr-2', 10_000_000) } });
  await call('POST', `${SUBS}/${spotAgent}/allocation/withdraw`, u1.accessToken, { amountUsd: 30 });
  await call('POST', SUBS, u1.accessToken, { agentId: spotAgent, isPaused: true });

  const stopped = poolId(u2.userId, spotAgent, 'virtual');
  await call('POST', SUBS, u2.accessToken, { agentId: spotAgent, allocationAmountUsd: 200 });
  await dispatch(app, 'RecordPoolFact', { poolId: stopped, fact: { type: 'OpenTrade', data: oneTrade('tr-3', 20_000_000) } });
  await dispatch(app, 'RecordPoolFact', { poolId: stopped, fact: { type: 'CloseTrade', data: { tradeId: 'tr-3', realizedPnlMicro: -1_000_000 } } });
  await call('DELETE', `${SUBS}/${spotAgent}`, u2.accessToken);

  const reopened = poolId(u3.userId, spotAgent, 'virtual');
  await call('POST', SUBS, u3.accessToken, { agentId: spotAgent, allocationAmountUsd: 60 });
  await call('DELETE', `${SUBS}/${spotAgent}`, u3.accessToken);
  await call('POST', SUBS, u3.accessToken, { agentId: spotAgent, allocationAmountUsd: 25 });

  const real = poolId(u3.userId, perpAgent, 'real');
  await call('POST', `/api/admin/wallets/${u3.userId}/deposit`, admin.accessToken, { amountUsd: 1000 });
  await call('POST', SUBS, u3.accessToken, { agentId: perpAgent, walletContext: 'real', allocationAmountUsd: 300 });
  await dispatch(app, 'RecordPoolFact', {
    poolId: real,
    fact: { type: 'ObserveVenue', data: { status: 'GAP', venueEquityMicro: 290_000_000, venueFreeMarginMicro: 250_000_000, gapMicro: -10_000_000 } },
  });
  return { admin, users, spotAgent, perpAgent, pools: { trading, stopped, reopened, real } };
}
