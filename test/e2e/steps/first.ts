import type { Test } from 'tap';
import { allProjectors } from '../../../projections/index.ts';
import { ProjectionRunner } from '../../../projections/runner.ts';
import { api, startTestApp, type TestApp } from '../../support/app.ts';
import { signIn, TEST_USER_AGENT, type SignedIn } from '../../support/auth.ts';
import { totpAt, verifyByEmail } from '../../support/mfa.ts';
import { ledgerFlow } from './ledger.ts';
import { ADMIN, expectRebuildEqualsLive, listAndApprove, type People } from './support.ts';

/**
 * The first complete flow: a developer lists an agent, an administrator approves it, a user
 * signs in by emailed code and follows it with a virtual pool, and every read model shows it;
 * then the pool ledger through real HTTP (add, withdraw, an administrator's deposit and a real
 * follow pending at the venue, a trade opened, marked and closed with profit, a venue
 * observation, stop following), the wallet and the subscriptions checked after each step;
 * projectors stopped mid-flow resume exactly where they were; a rebuild equals the live models.
 */
export async function firstFlow(t: Test, eventStore: 'postgres' | 'esdb') {
  // The simulated chain takes an hour: the real pool's add stays pending through the flow
  // (test/workers/reconciliation.test.ts settles them). An empty database: the service creates
  // its whole schema at start, as in production (other test apps start on a copy of it).
  const app = await startTestApp({
    eventStore,
    emptyDatabase: true,
    config: { ADMIN_EMAILS: ADMIN, READ_YOUR_WRITES_TIMEOUT_MS: '3000', VENUE_SIM_CHAIN_MS: '3600000' },
  });
  t.teardown(() => app.close());
  t.equal(app.deps.store.kind, eventStore);

  const developer = await signIn(app, 'dev@example.test');
  const admin = await signIn(app, ADMIN);
  const user = await signIn(app, 'follower@example.test');
  const people = { developer, admin, user };

  const agentId = await listApproveAndFollow(t, app, people);
  await profileAndRecoveryCode(t, app, people, agentId);
  await ledgerFlow(t, app, { user, admin, agentId });
  const resumed = await resumeProjectors(t, app, people, agentId);

  await new Promise((r) => setTimeout(r, 200));
  await resumed.stop();
  await expectRebuildEqualsLive(t, app);
}

/** The user's calls to the profile routes. */
const asUser = (app: TestApp, user: SignedIn) => (method: string, path: string, body?: unknown) =>
  api(app, method, path, { token: user.accessToken, ...(body ? { body } : {}) });

/** Momentum listed, approved, and followed with a virtual pool of 1500 USD; every read model shows it. */
async function listApproveAndFollow(t: Test, app: TestApp, { developer, admin, user }: People): Promise<string> {
  const { listed, approved } = await listAndApprove(app, developer.accessToken, admin.accessToken, 'Momentum');
  t.equal(listed.status, 201);
  t.match(listed.body.data.inboundWebhookSigningSecretReveal, /\S{20,}/, 'the signing secret is shown once');
  t.equal(approved.status, 200);
  t.equal(approved.body.data.betaStatus, 'beta');
  const agentId: string = listed.body.data.id;

  const agents = await api(app, 'GET', '/api/v1/agents', { token: user.accessToken });
  t.ok(
    agents.body.data.items.some((a: { id: string }) => a.id === agentId),
    'the approved agent is followable',
  );

  const follow = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
    token: user.accessToken,
    body: { agentId, tradeMode: 'AUTO_TRADING', walletContext: 'virtual', allocationMode: 'USD_AMOUNT', allocationAmountUsd: 1500 },
  });
  t.equal(follow.status, 200, JSON.stringify(follow.body));
  t.equal(follow.body.data.subscription.allocatedUsd, 1500, 'the response shows its own effect');

  const subs = await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
  t.equal(subs.body.data.length, 1);
  t.match(subs.body.data[0], {
    agent: agentId,
    walletContext: 'virtual',
    allocatedUsd: 1500,
    currentBalanceUsd: 1500,
    withdrawableUsd: 1500,
    allocationBalanceAudit: { depositedUsd: 1500, reconciliationStatus: 'IN_SYNC' },
  });
  const reviews = await api(app, 'GET', `/api/v1/developers/agents/${agentId}/reviews`, { token: developer.accessToken });
  t.equal(reviews.body.data.items[0].status, 'approve');
  const me = await api(app, 'GET', '/api/v1/users/me', { token: developer.accessToken });
  t.equal(me.body.data.role, 'developer', 'listing an agent made the user a developer');
  return agentId;
}

/** The profile's columns of the users read model, for the rebuild's comparison at the end. */
async function profileAndRecoveryCode(t: Test, app: TestApp, { developer, user }: People, agentId: string) {
  const profile = asUser(app, user);
  t.equal((await profile('POST', '/api/v1/users/me/guide-agent', { guideAgentId: agentId })).status, 200, 'the agent is the guide');
  t.equal((await profile('POST', '/api/v1/users/me/interests', { interests: ['Momentum', 'momentum', 'spot'] })).status, 200, 'interests');
  t.equal((await profile('POST', `/api/v1/agents/${agentId}/pin`)).status, 200, 'pinned');
  // MFA on for the developer, then a sign-in with a recovery code: the users row's count of codes left is in the rebuild's comparison.
  const { secret } = (await api(app, 'POST', '/api/v1/users/me/mfa/enrol', { token: developer.accessToken })).body.data;
  const confirmed = await api(app, 'POST', '/api/v1/users/me/mfa/confirm', { token: developer.accessToken, body: { code: totpAt(secret, new Date()) } });
  const { tokens } = (await verifyByEmail(app, 'dev@example.test')).body.data;
  const body = { mfaAccessToken: tokens.mfaAccessToken, recoveryCode: confirmed.body.data.recoveryCodes[0] };
  t.equal(
    (await api(app, 'POST', '/api/auth/mfa/verify', { headers: { 'user-agent': TEST_USER_AGENT }, body })).status,
    200,
    'a recovery code completes a sign-in',
  );
  t.equal((await api(app, 'GET', '/api/v1/users/me', { token: developer.accessToken })).body.data.mfaRecoveryCodesLeft, 9);
}

/** Projectors stop; the flow goes on; new projectors resume from the stored checkpoints. Returns the resumed runner. */
async function resumeProjectors(t: Test, app: TestApp, { developer, admin, user }: People, agentId: string): Promise<ProjectionRunner> {
  const profile = asUser(app, user);
  await app.runtime.runner!.stop();
  const second = await listAndApprove(app, developer.accessToken, admin.accessToken, 'Breakout');
  t.equal(second.listed.status, 201, 'commands are accepted while no projector runs');
  const secondId: string = second.listed.body.data.id;
  const resumed = new ProjectionRunner(app.deps.store, app.deps.pool, allProjectors);
  await resumed.start();
  t.teardown(() => resumed.stop());
  const follow2 = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
    token: user.accessToken,
    body: { agentId: secondId, allocationMode: 'PERCENTAGE_RANGE', allocationPercentageMax: 10 },
  });
  t.equal(follow2.status, 200, JSON.stringify(follow2.body));
  await profile('POST', `/api/v1/agents/${secondId}/pin`);
  t.same((await profile('DELETE', `/api/v1/agents/${agentId}/pin`)).body.data.pinnedAgentIds, [secondId], 'pins follow the resumed projector');
  t.match((await profile('GET', '/api/v1/users/me')).body.data, { guideAgentId: agentId, interests: ['Momentum', 'spot'], pinnedAgentIds: [secondId] });
  await app.deps.readYourWrites(undefined);
  const deadline = Date.now() + 10_000;
  let after = await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
  while (after.body.data.length < 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    after = await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
  }
  const byAgent = new Map(after.body.data.map((s: { agent: string; allocatedUsd: number }) => [s.agent, s.allocatedUsd]));
  t.equal(byAgent.get(agentId), 0, "the real pool's credit still waits for the venue");
  t.equal(byAgent.get(secondId), 1012, '10% of the 10120 USD in the virtual wallet');
  const reviews2 = await api(app, 'GET', `/api/v1/developers/agents/${secondId}/reviews`, { token: developer.accessToken });
  t.equal(reviews2.body.data.pagination.total, 1, 'the resumed projector applied the approval once');
  const owned = await api(app, 'GET', '/api/v1/developers/agents', { token: developer.accessToken });
  t.equal(owned.body.data.pagination.total, 2, 'each listing applied once');
  return resumed;
}
