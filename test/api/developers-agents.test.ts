import t from 'tap';
import { agentsProjector } from '../../projections/agents/projector.ts';
import { rebuild } from '../../projections/rebuild.ts';
import { AGENT_SIGNING_SECRET, decryptSecret } from '../../infra/secrets.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

const spotAgent = (overrides: Record<string, unknown> = {}) => ({
  name: 'Momentum Scalper',
  description: 'Trades breakouts on majors',
  strategyDescription: 'Enters on a 4h close above resistance',
  avatarUrl: 'https://img.example.test/a.png',
  tags: ['momentum', 'majors'],
  monthlyPrice: 19.99,
  successFeePercent: 15,
  maxBetaUsers: 50,
  webhookUrl: 'https://dev.example.test/hook',
  connectedChannels: [{ channelId: 'c1', channelName: 'Alpha calls', memberCount: 1200 }],
  signalDetectionRule: { longKeywords: ['LONG'], shortKeywords: ['SHORT'], strategyPrefix: 'MS' },
  signalExecutionDefaults: { leverageMax: 5, takeProfitTiers: [{ closePercent: 50, whenPositionPercent: 3 }] },
  membershipGated: false,
  externalSignupUrl: 'https://dev.example.test/join',
  venue: 'SPOT_VENUE',
  minAllocationUsd: 25.5,
  minTradeUsd: 5,
  minPerTradePercent: 2,
  recommendedPerTradePercent: 10,
  maxConcurrentPositions: 4,
  maxEntriesPerTrade: 2,
  ...overrides,
});

t.test('developer agents', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const dev = await signIn(app, 'dev@example.test');
  const other = await signIn(app, 'other@example.test');

  await t.test('a signed-in user lists an agent: 201, pending-review, the signal URL and the secret once', async (t) => {
    const res = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: spotAgent() });
    t.equal(res.status, 201);
    const a = res.body.data;
    t.match(a, {
      developerId: dev.userId,
      name: 'Momentum Scalper',
      betaStatus: 'pending-review',
      monthlyPrice: 19.99,
      successFeePercent: 15,
      maxBetaUsers: 50,
      venue: 'SPOT_VENUE',
      minAllocationUsd: 25.5,
      minTradeUsd: 5,
      minPerTradePercent: 2,
      recommendedPerTradePercent: 10,
      maxConcurrentPositions: 4,
      maxEntriesPerTrade: 2,
      tags: ['momentum', 'majors'],
      connectedChannels: [{ channelId: 'c1', channelName: 'Alpha calls', memberCount: 1200 }],
      signalDetectionRule: { longKeywords: ['LONG'], strategyPrefix: 'MS' },
      performanceStats: { betaSeatsTaken: 0 },
    });
    t.notOk('maxLeverage' in a, 'a spot agent has no leverage');
    t.notOk('betaStartDate' in a, 'no beta start before approval');
    t.equal(a.inboundSignalsHttpUrl, `${app.url}/api/v1/signals/${a.id}`);
    t.match(a.inboundWebhookSigningSecretReveal, /^whsec_[A-Za-z0-9_-]{43}$/);
    t.ok(a.createdAt && a.updatedAt);

    const me = await api(app, 'GET', '/api/v1/users/me', { token: dev.accessToken });
    t.equal(me.body.data.role, 'developer', 'listing an agent makes the caller a developer');
  });

  await t.test('the signing secret is stored encrypted and never shown again', async (t) => {
    const created = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: spotAgent({ name: 'Secretive' }) });
    const { id, inboundWebhookSigningSecretReveal: secret } = created.body.data;

    const events = await app.deps.store.readStream(`agent-${id}`);
    const stored = JSON.stringify(events.map((e) => e.data));
    t.notOk(stored.includes(secret), 'the plaintext is not in the event store');
    const ciphertext = (events[0]!.data as { signingSecretCiphertext: string }).signingSecretCiphertext;
    t.equal(decryptSecret(ciphertext, app.deps.config.JWT_SECRET, AGENT_SIGNING_SECRET), secret, 'the ciphertext opens to it');

    const list = await api(app, 'GET', '/api/v1/developers/agents?limit=100', { token: dev.accessToken });
    t.equal(list.status, 200);
    t.notOk(JSON.stringify(list.body).includes(secret), 'not in the listing');
    t.notOk(JSON.stringify(list.body).includes('inboundWebhookSigningSecretReveal'));
    t.notOk(JSON.stringify(list.body).includes('signingSecretCiphertext'));
    const row = await app.deps.pool.query('SELECT record::text AS r FROM agent_records WHERE id = $1', [id]);
    t.notOk(row.rows[0].r.includes('signingSecret'), 'not in the read model');
  });

  await t.test('a perp agent carries its maximum leverage', async (t) => {
    const res = await api(app, 'POST', '/api/v1/developers/agents', {
      token: dev.accessToken,
      body: spotAgent({ name: 'Perp Trend', venue: 'PERP_VENUE', maxLeverage: 20 }),
    });
    t.equal(res.status, 201);
    t.match(res.body.data, { venue: 'PERP_VENUE', maxLeverage: 20 });
  });

  await t.test('omitted optional fields take their defaults', async (t) => {
    const res = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: { name: 'Bare' } });
    t.equal(res.status, 201);
    t.match(res.body.data, {
      venue: 'SPOT_VENUE',
      tags: [],
      monthlyPrice: 0,
      successFeePercent: 0,
      membershipGated: false,
      connectedChannels: [],
      minAllocationUsd: 0,
      minTradeUsd: 0,
    });
  });

  await t.test('invalid listings are 400 with a message naming the field', async (t) => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['empty name', { name: '' }, /name must be 1 to 80 characters/],
      ['name over 80 characters', { name: 'x'.repeat(81) }, /name must be 1 to 80 characters/],
      ['success fee over 50', { successFeePercent: 51 }, /successFeePercent must be between 0 and 50/],
      ['negative monthly price', { monthlyPrice: -1 }, /monthlyPrice must not be negative/],
      ['no beta seats', { maxBetaUsers: 0 }, /maxBetaUsers must be at least 1/],
      ['invalid webhook URL', { webhookUrl: 'not a url' }, /webhookUrl must be a valid URL/],
      ['plain http webhook URL', { webhookUrl: 'http://dev.example.test/hook' }, /webhookUrl must be an https URL/],
      ['plain http to loopback without WEBHOOK_ALLOW_LOOPBACK', { webhookUrl: 'http://127.0.0.1:8080/hook' }, /webhookUrl must be an https URL/],
      ['another scheme', { webhookUrl: 'ftp://dev.example.test/hook' }, /webhookUrl must be an https URL/],
      ['invalid avatar URL', { avatarUrl: 'ftp//x' }, /avatarUrl must be a valid URL/],
      ['negative minimum allocation', { minAllocationUsd: -5 }, /minAllocationUsd must not be negative/],
      ['negative minimum trade', { minTradeUsd: -0.01 }, /minTradeUsd must not be negative/],
      ['perp without leverage', { venue: 'PERP_VENUE' }, /maxLeverage is required for PERP_VENUE/],
      ['perp leverage above 100', { venue: 'PERP_VENUE', maxLeverage: 101 }, /maxLeverage must be from 1 to 100/],
      ['spot with leverage', { maxLeverage: 3 }, /maxLeverage is not allowed for SPOT_VENUE/],
      ['unknown venue', { venue: 'MOON_VENUE' }, /venue/],
    ];
    for (const [label, overrides, message] of cases) {
      const res = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: spotAgent(overrides) });
      t.equal(res.status, 400, label);
      t.equal(res.body.error?.code, 'BAD_REQUEST', label);
      t.match(res.body.error?.message, message, label);
    }
  });

  await t.test('listing and reading agents needs a signed-in caller', async (t) => {
    const post = await api(app, 'POST', '/api/v1/developers/agents', { body: spotAgent() });
    t.equal(post.status, 401);
    t.equal(post.body.error.code, 'UNAUTHORIZED');
    const get = await api(app, 'GET', '/api/v1/developers/agents');
    t.equal(get.status, 401);
    const bad = await api(app, 'POST', '/api/v1/developers/agents', { token: 'a.b.c', body: { name: '' } });
    t.equal(bad.status, 401, 'a bad token is 401 even with an invalid body');
  });

  await t.test('the developer listing shows only the caller’s agents, newest first, paginated', async (t) => {
    const owner = await signIn(app, 'pager@example.test');
    for (const name of ['P1', 'P2', 'P3']) {
      const res = await api(app, 'POST', '/api/v1/developers/agents', { token: owner.accessToken, body: { name } });
      t.equal(res.status, 201);
    }
    await api(app, 'POST', '/api/v1/developers/agents', { token: other.accessToken, body: { name: 'Not yours' } });

    const first = await api(app, 'GET', '/api/v1/developers/agents?limit=2', { token: owner.accessToken });
    t.equal(first.status, 200);
    t.same(
      first.body.data.items.map((a: { name: string }) => a.name),
      ['P3', 'P2'],
    );
    t.same(first.body.data.pagination, { total: 3, limit: 2, page: 1, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
    const second = await api(app, 'GET', '/api/v1/developers/agents?limit=2&page=2', { token: owner.accessToken });
    t.same(
      second.body.data.items.map((a: { name: string }) => a.name),
      ['P1'],
    );
    t.match(second.body.data.pagination, { hasNextPage: false, hasPreviousPage: true });
    t.ok(second.body.data.items.every((a: { inboundSignalsHttpUrl: string; id: string }) => a.inboundSignalsHttpUrl.endsWith(`/api/v1/signals/${a.id}`)));

    const bad = await api(app, 'GET', '/api/v1/developers/agents?limit=0', { token: owner.accessToken });
    t.equal(bad.status, 400, 'a limit below 1 is refused');
  });

  await t.test('the developer edits the signal settings: each field sent replaces the old one, others may not', async (t) => {
    const listed = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: spotAgent({ name: 'Editable' }) });
    const id = listed.body.data.id as string;
    const path = `/api/v1/developers/agents/${id}`;
    const rule = { longKeywords: ['send it'], tokenPatterns: ['coin:\\s*([a-z0-9]+)'], strategyPrefix: 'ED' };
    const res = await api(app, 'PATCH', path, { token: dev.accessToken, body: { signalDetectionRule: rule } });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.same(res.body.data.signalDetectionRule, rule, 'the new rule replaces the old one');
    t.same(res.body.data.signalExecutionDefaults, spotAgent().signalExecutionDefaults, 'a field not sent is kept');
    t.notOk('inboundWebhookSigningSecretReveal' in res.body.data, 'the secret is never shown again');
    const listing = await api(app, 'GET', '/api/v1/developers/agents?limit=100', { token: dev.accessToken });
    t.same(listing.body.data.items.find((a: { id: string }) => a.id === id).signalDetectionRule, rule, 'the listing shows it');

    const defaults = { leverageMax: 3, cooldownSeconds: 60, tokenWhitelist: ['BTC', 'SOL'] };
    const both = await api(app, 'PATCH', path, { token: dev.accessToken, body: { signalExecutionDefaults: defaults } });
    t.same(both.body.data.signalExecutionDefaults, defaults);
    const streamOf = async () => (await app.deps.store.readStream(`agent-${id}`)).map((e) => e.type);
    const before = await streamOf();
    t.equal(
      (
        await api(app, 'PATCH', path, {
          token: dev.accessToken,
          body: { signalExecutionDefaults: { tokenWhitelist: ['BTC', 'SOL'], cooldownSeconds: 60, leverageMax: 3 } },
        })
      ).status,
      200,
    );
    t.same(await streamOf(), before, 'the same settings in another key order record nothing');
    t.same(before.filter((type) => type === 'AgentSignalSettingsUpdated').length, 2, 'one event per change');

    const notOwner = await api(app, 'PATCH', path, { token: other.accessToken, body: { signalDetectionRule: {} } });
    t.equal(notOwner.status, 403);
    t.equal(notOwner.body.error.reason, 'NOT_AGENT_OWNER');
    const unknown = await api(app, 'PATCH', '/api/v1/developers/agents/00000000-0000-4000-8000-000000000000', {
      token: dev.accessToken,
      body: { signalDetectionRule: {} },
    });
    t.equal(unknown.status, 404);
    t.equal((await api(app, 'PATCH', path, { body: { signalDetectionRule: {} } })).status, 401, 'signed-in callers only');
    for (const body of [
      {},
      { signalDetectionRule: { tokenPatterns: ['(a+)+$'] } },
      { signalDetectionRule: { longKeywords: 'LONG' } },
      { signalExecutionDefaults: { leverageMax: 0 } },
      { name: 'renamed' },
    ]) {
      const bad = await api(app, 'PATCH', path, { token: dev.accessToken, body });
      t.equal(bad.status, 400, `${JSON.stringify(body)} is a 400`);
      t.equal(bad.body.success, false);
      t.ok(bad.body.error.message.length > 0, bad.body.error.message);
    }
    t.same(await streamOf(), before, 'a refused edit records nothing');
    const rows = async () => (await app.deps.pool.query('SELECT * FROM agent_records ORDER BY id')).rows;
    const live = await rows();
    await rebuild(app.deps.store, app.deps.pool, agentsProjector);
    t.same(await rows(), live, 'the agents read model rebuilds row for row, edits included');
  });
});
