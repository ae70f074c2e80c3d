// node --import=tsx bench/conventional/check.ts: the baseline must be the same follow, or the bench
// compares nothing. Sends one sequence of requests to our app and to the conventional server, checks
// that both answer alike (timestamps aside), and checks the conventional rows after each step.
import { isDeepStrictEqual } from 'node:util';
import { api, startTestApp } from '../../test/support/app.ts';
import { followableAgent } from '../../test/support/agents.ts';
import { signIn } from '../../test/support/auth.ts';
import { startConventional } from './start.ts';

const PATH = '/api/v1/users/me/subscriptions';
const ADMIN = 'check-admin@example.test';
const agentBody = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  venue: 'SPOT_VENUE',
  avatarUrl: 'https://img.example.test/a.png',
  minAllocationUsd: 25.5,
  ...extra,
});

/** Timestamps differ between two services by nature; everything else must be equal. */
function withoutTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !['subscribedAt', 'createdAt', 'updatedAt'].includes(k))
      .map(([k, v]) => [k, withoutTimes(v)]),
  );
}

let problems = 0;
function expect(ok: boolean, what: string, detail?: unknown) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) {
    problems++;
    if (detail !== undefined) console.log(JSON.stringify(detail, null, 2));
  }
}

const app = await startTestApp({ durable: false, config: { ADMIN_EMAILS: ADMIN } });
try {
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'check-dev@example.test');
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  const live = await followableAgent(app, tokens, agentBody('Live Spot'), { live: true });
  const perp = await followableAgent(app, tokens, agentBody('Beta Perp', { venue: 'PERP_VENUE', maxLeverage: 5, maxBetaUsers: 1, minAllocationUsd: 0 }));
  const pending = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: agentBody('Pending') });
  const pendingId = pending.body.data.id as string;
  const u1 = await signIn(app, 'check-u1@example.test');
  const u2 = await signIn(app, 'check-u2@example.test');

  const conv = await startConventional(app, { userIds: [u1.userId, u2.userId], agentIds: [live, perp, pendingId] }, 4);
  try {
    const both = async (what: string, method: string, token: string | undefined, body?: unknown) => {
      const ours = await api(app, method, PATH, { token, body });
      const theirs = await api({ url: conv.url }, method, PATH, { token, body });
      expect(
        ours.status === theirs.status && isDeepStrictEqual(withoutTimes(ours.body), withoutTimes(theirs.body)),
        `${what}: ${ours.status} on both sides, same body`,
        { ours: ours.body, conventional: theirs.body, status: [ours.status, theirs.status] },
      );
      return theirs;
    };
    const row = async (sql: string, values: unknown[]) => (await conv.db.query(sql, values)).rows[0];
    const wallet = async () => Number((await row('SELECT balance_micro FROM wallets WHERE user_id = $1', [u1.userId]))?.balance_micro);
    const audits = async () => Number((await row('SELECT count(*) AS n FROM follow_audit WHERE user_id = $1', [u1.userId])).n);
    const allocated = async () =>
      Number((await row('SELECT confirmed_in_micro FROM subscriptions WHERE user_id = $1 AND agent_id = $2', [u1.userId, live])).confirmed_in_micro);

    const first = await both('first follow of 100 USD', 'POST', u1.accessToken, { agentId: live, allocationAmountUsd: 100 });
    expect(first.body.data?.message === 'Now following Live Spot', 'first follow says "Now following"');
    expect(first.body.data?.subscription?.allocatedUsd === 100, 'the answer carries the subscription record, 100 USD allocated');
    expect((await wallet()) === 9_900_000_000, 'the wallet opened at 10000 USD and paid 100 USD');
    expect((await allocated()) === 100_000_000, 'the pool row holds 100 USD');
    expect((await audits()) === 1, 'one audit row');

    await both('follow again with 250 USD', 'POST', u1.accessToken, { agentId: live, allocationAmountUsd: 250 });
    expect((await wallet()) === 9_750_000_000 && (await allocated()) === 250_000_000, 'tops up by 150 USD, not 250');
    expect((await audits()) === 2, 'a second audit row');

    await both('follow again with 50 USD and ALERTS_ONLY', 'POST', u1.accessToken, { agentId: live, allocationAmountUsd: 50, tradeMode: 'ALERTS_ONLY' });
    expect((await wallet()) === 9_750_000_000 && (await allocated()) === 250_000_000, 'a lower target withdraws nothing');

    await both('follow again with the same settings', 'POST', u1.accessToken, { agentId: live });
    await both('20000 USD: insufficient funds', 'POST', u1.accessToken, { agentId: live, allocationAmountUsd: 20_000 });
    expect((await wallet()) === 9_750_000_000 && (await audits()) === 4, 'the refused follow changed nothing (rolled back)');

    await both('10 USD, below the minimum of 25.5', 'POST', u2.accessToken, { agentId: live, allocationAmountUsd: 10 });
    await both('a beta perp agent, 1% of the balance', 'POST', u1.accessToken, { agentId: perp, allocationPercentageMax: 1 });
    await both('the only beta seat is taken', 'POST', u2.accessToken, { agentId: perp, allocationAmountUsd: 5 });
    await both('an agent pending review', 'POST', u1.accessToken, { agentId: pendingId });
    await both('an unknown agent', 'POST', u1.accessToken, { agentId: 'no-such-agent' });
    await both('two allocation modes without a mode', 'POST', u1.accessToken, { agentId: live, allocationAmountUsd: 1, allocationAmountSol: 1 });
    await both('SOL amount in the real context (no funds)', 'POST', u2.accessToken, { agentId: live, allocationAmountSol: 1, walletContext: 'real' });
    await both('no token', 'POST', undefined, { agentId: live });
    await both('GET subscriptions', 'GET', u1.accessToken);
    await both('GET subscriptions of an empty user', 'GET', u2.accessToken);
  } finally {
    await conv.stop();
  }
} finally {
  await app.close();
}
console.log(problems ? `${problems} problem(s)` : 'the conventional baseline answers as ours does');
process.exit(problems ? 1 : 0);
