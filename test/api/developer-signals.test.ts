import t from 'tap';
import { signalDecider, signalInstanceId } from '../../domain/signal/decide.ts';
import type { PoolResult } from '../../domain/signal/events.ts';
import { anonymizedSubscriberId } from '../../infra/anonymize.ts';
import { rebuild } from '../../projections/rebuild.ts';
import { signalsProjector } from '../../projections/signals/projector.ts';
import { api, startTestApp } from '../support/app.ts';
import { committedLog } from '../support/log.ts';
import { signIn } from '../support/auth.ts';
import { appendFacts, signalKeyOf, writeSignal } from '../support/facts.ts';

const minute = (n: number) => new Date(Date.UTC(2025, 2, 1, 12, n));

t.test('the signal inbox: GET …/signals and POST …/signals/{signalId}/replay', async (t) => {
  // The signals below are written as facts, received long ago and never executed: the signal
  // sweep (every TRANSFER_RECOVERY_INTERVAL_MS) would execute them under the test's feet.
  const app = await startTestApp({ config: { TRANSFER_RECOVERY_INTERVAL_MS: '3600000' } });
  t.teardown(() => app.close());
  const dev = await signIn(app, 'dev@example.test');
  const other = await signIn(app, 'other@example.test');
  const alice = await signIn(app, 'alice@example.test');
  const bob = await signIn(app, 'bob@example.test');
  const rule = { shortKeywords: ['dump'] };
  const defaults = { leverageMax: 10 };
  const listed = await api(app, 'POST', '/api/v1/developers/agents', {
    token: dev.accessToken,
    body: { name: 'Inbox', venue: 'PERP_VENUE', maxLeverage: 20, signalDetectionRule: rule, signalExecutionDefaults: defaults },
  });
  t.equal(listed.status, 201, JSON.stringify(listed.body));
  const agentId = listed.body.data.id as string;
  const inbox = `/api/v1/developers/agents/${agentId}/signals`;

  const signal = (signalId: string, body: Record<string, unknown>, when: Date, results?: PoolResult[]) =>
    writeSignal(app, agentId, { ...body, signalId }, when, { rule, defaults, ...(results ? { results } : {}) });
  const poolOf = (user: { userId: string }, context: string) => `${user.userId}.${agentId}.${context}`;

  // A text signal executed in some pools; chatter (unmatched at once); a structured signal not
  // executed yet; a text the rule does not read (PUMP is no keyword of it, and without a target the levels give no side).
  await signal('s1', { signalId: 's1', text: 'LONG $SOL entry 150 sl 140 tp 160' }, minute(1), [
    { poolId: poolOf(alice, 'virtual'), status: 'executed', tradeIds: ['trade-a1'] },
    { poolId: poolOf(bob, 'real'), status: 'skipped', tradeIds: [], skipReason: 'INSUFFICIENT_CAPITAL' },
    { poolId: poolOf(alice, 'real'), status: 'failed', tradeIds: [], errorMessage: 'no mark price for SOL', errorTags: ['NO_MARK_PRICE'] },
  ]);
  await signal('s2', { signalId: 's2', text: 'gm everyone' }, minute(2));
  await signal('s3', { signalId: 's3', action: 'open', side: 'long', token: 'SOL', entry: 150, stopLoss: 140, takeProfit: 160, leverage: 20 }, minute(3));
  await signal('s4', { signalId: 's4', text: 'PUMP $SOL entry 150 sl 140' }, minute(4));

  await t.test('the owner reads every signal, newest first, with its body, interpretation and anonymized results', async (t) => {
    const res = await api(app, 'GET', inbox, { token: dev.accessToken });
    t.equal(res.status, 200, JSON.stringify(res.body));
    const items = res.body.data.items as Array<Record<string, any>>;
    t.same(
      items.map((i) => i.signalId),
      ['s4', 's3', 's2', 's1'],
    );
    t.same(res.body.data.pagination, { total: 4, limit: 20, page: 1, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    const [s4, s3, s2, s1] = items as [Record<string, any>, Record<string, any>, Record<string, any>, Record<string, any>];
    t.same(s1.body, { signalId: 's1', text: 'LONG $SOL entry 150 sl 140 tp 160' }, 'the raw body');
    t.match(s1, { signalIdGiven: true, source: 'text', replyTo: null, outcome: 'partially_executed', skipReason: null, receivedAt: minute(1).toISOString() });
    t.equal(s1.executedAt, new Date(minute(1).getTime() + 1000).toISOString());
    t.equal(s1.interpretation.kind, 'signal');
    t.equal(s1.ruleVersion, s1.interpretation.ruleVersion);
    t.match(s1.ruleVersion, /^sp2-/);
    t.same(s1.executionResults, [
      {
        subscriberId: anonymizedSubscriberId(app.deps.config.JWT_SECRET, agentId, alice.userId),
        walletContext: 'virtual',
        executionResult: { status: 'executed', tradeIds: ['trade-a1'] },
      },
      {
        subscriberId: anonymizedSubscriberId(app.deps.config.JWT_SECRET, agentId, bob.userId),
        walletContext: 'real',
        executionResult: { status: 'skipped', tradeIds: [], skipReason: 'INSUFFICIENT_CAPITAL' },
      },
      {
        subscriberId: anonymizedSubscriberId(app.deps.config.JWT_SECRET, agentId, alice.userId),
        walletContext: 'real',
        executionResult: { status: 'failed', tradeIds: [], errorMessage: 'no mark price for SOL', errorTags: ['NO_MARK_PRICE'] },
      },
    ]);
    t.equal(s1.executionResults[0].subscriberId, s1.executionResults[2].subscriberId, 'one follower, one id across their pools');
    t.match(s2, { outcome: 'unmatched', interpretation: { kind: 'unmatched', reason: 'NO_SIGNAL' }, executionResults: [] });
    t.match(s3, { source: 'structured', outcome: null, executedAt: null, ruleVersion: 'structured-1', executionResults: [] });
    t.equal(s3.interpretation.intents[0].leverage, 10, 'capped at leverageMax when it arrived');
    t.match(s4, { outcome: 'unmatched', interpretation: { kind: 'unmatched', reason: 'MISSING_SIDE' } });
    const text = JSON.stringify(res.body);
    for (const user of [alice, bob]) t.notOk(text.includes(user.userId), 'no user id anywhere in the answer');
    t.notOk(text.includes('poolId'), 'no pool id');
  });

  await t.test('filter by outcome (pending: not executed yet), paginated', async (t) => {
    const ids = async (query: string) =>
      (await api(app, 'GET', `${inbox}${query}`, { token: dev.accessToken })).body.data.items.map((i: { signalId: string }) => i.signalId);
    t.same(await ids('?outcome=pending'), ['s3']);
    t.same(await ids('?outcome=unmatched'), ['s4', 's2']);
    t.same(await ids('?outcome=partially_executed'), ['s1']);
    t.same(await ids('?outcome=executed'), []);
    const page = await api(app, 'GET', `${inbox}?limit=3&page=2`, { token: dev.accessToken });
    t.same(
      page.body.data.items.map((i: { signalId: string }) => i.signalId),
      ['s1'],
    );
    t.same(page.body.data.pagination, { total: 4, limit: 3, page: 2, totalPages: 2, hasNextPage: false, hasPreviousPage: true });
    const filtered = await api(app, 'GET', `${inbox}?outcome=unmatched&limit=1`, { token: dev.accessToken });
    t.same(filtered.body.data.pagination, { total: 2, limit: 1, page: 1, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
    for (const query of ['?outcome=bogus', '?outcome=', '?limit=0']) {
      const bad = await api(app, 'GET', `${inbox}${query}`, { token: dev.accessToken });
      t.equal(bad.status, 400, query);
      t.match(bad.body, { success: false, error: { code: 'BAD_REQUEST' } });
    }
  });

  await t.test('owner only: 401 without a token, 403 for another developer, 404 for an unknown agent', async (t) => {
    t.equal((await api(app, 'GET', inbox)).status, 401);
    const notOwner = await api(app, 'GET', inbox, { token: other.accessToken });
    t.equal(notOwner.status, 403);
    t.equal(notOwner.body.error.reason, 'NOT_AGENT_OWNER');
    const unknown = await api(app, 'GET', '/api/v1/developers/agents/00000000-0000-4000-8000-000000000000/signals', { token: dev.accessToken });
    t.equal(unknown.status, 404);
    t.equal(unknown.body.error.reason, 'AGENT_NOT_FOUND');
    const replay = `${inbox}/s1/replay`;
    t.equal((await api(app, 'POST', replay)).status, 401);
    t.equal((await api(app, 'POST', replay, { token: other.accessToken })).status, 403);
    t.equal(
      (await api(app, 'POST', '/api/v1/developers/agents/00000000-0000-4000-8000-000000000000/signals/s1/replay', { token: dev.accessToken })).status,
      404,
    );
    const noSignal = await api(app, 'POST', `${inbox}/nope/replay`, { token: dev.accessToken });
    t.equal(noSignal.status, 404);
    t.equal(noSignal.body.error.reason, 'SIGNAL_NOT_FOUND');
  });

  await t.test('replay (dry run) reads the stored body again with the current rules', async (t) => {
    const before = await committedLog(app);
    const same = await api(app, 'POST', `${inbox}/s1/replay`, { token: dev.accessToken });
    t.equal(same.status, 200, JSON.stringify(same.body));
    t.match(same.body.data, { signalId: 's1', dryRun: true, changed: false, previous: { outcome: 'partially_executed' } });
    t.same(same.body.data.interpretation, same.body.data.previous.interpretation, 'the same rules read it the same way');

    // The developer teaches the rule PUMP (long) and lowers the leverage cap.
    const patched = await api(app, 'PATCH', `/api/v1/developers/agents/${agentId}`, {
      token: dev.accessToken,
      body: { signalDetectionRule: { ...rule, longKeywords: ['pump'] }, signalExecutionDefaults: { leverageMax: 3 } },
    });
    t.equal(patched.status, 200, JSON.stringify(patched.body));

    const pump = await api(app, 'POST', `${inbox}/s4/replay?dryRun=true`, { token: dev.accessToken });
    t.equal(pump.status, 200, JSON.stringify(pump.body));
    const d = pump.body.data;
    t.match(d, {
      signalId: 's4',
      dryRun: true,
      changed: true,
      previous: { outcome: 'unmatched', interpretation: { kind: 'unmatched', reason: 'MISSING_SIDE' } },
    });
    t.match(d.interpretation, { kind: 'signal', intents: [{ action: 'open', token: 'SOL', side: 'long' }] }, 'the new rule reads PUMP as a long');
    t.not(d.ruleVersion, d.previous.ruleVersion);
    t.equal(d.ruleVersion, d.interpretation.ruleVersion);

    const text = await api(app, 'POST', `${inbox}/s1/replay`, { token: dev.accessToken, body: { dryRun: true } });
    t.match(text.body.data, { changed: false }, 'a new rule version that reads the signal the same way is no change');
    t.not(text.body.data.ruleVersion, text.body.data.previous.ruleVersion);
    const structured = await api(app, 'POST', `${inbox}/s3/replay`, { token: dev.accessToken, body: {} });
    t.match(structured.body.data, { changed: true, previous: { outcome: null } });
    t.equal(structured.body.data.interpretation.intents[0].leverage, 3, 'the lower cap applies');

    for (const [query, body] of [
      ['?dryRun=maybe', undefined],
      ['', { dryRun: 'no' }],
      ['', { dryRun: true, execute: true }],
    ] as const) {
      const refused = await api(app, 'POST', `${inbox}/s4/replay${query}`, { token: dev.accessToken, ...(body ? { body } : {}) });
      t.equal(refused.status, 400, `${query} ${JSON.stringify(body)}: a malformed choice is refused`);
      t.match(refused.body, { success: false, error: { code: 'BAD_REQUEST' } });
    }
    t.equal((await committedLog(app)).length, before.length + 1, 'a replay appends nothing (the PATCH appended one event)');
  });

  await t.test('the inbox follows the signal: an outcome recorded later shows at once', async (t) => {
    const stream = signalDecider.streamOf(signalInstanceId(agentId, signalKeyOf('s3')));
    await appendFacts(app, stream, [
      {
        type: 'SignalExecuted',
        data: {
          outcome: 'executed',
          results: [{ poolId: poolOf(bob, 'virtual'), status: 'executed', tradeIds: ['trade-b1'] }],
          executedAt: minute(9).toISOString(),
        },
      },
    ]);
    await appendFacts(app, stream, [{ type: 'SignalExecuted', data: { outcome: 'failed', results: [], executedAt: minute(10).toISOString() } }]);
    const res = await api(app, 'GET', `${inbox}?outcome=executed`, { token: dev.accessToken });
    t.same(
      res.body.data.items.map((i: { signalId: string }) => i.signalId),
      ['s3'],
    );
    t.match(
      res.body.data.items[0],
      {
        outcome: 'executed',
        executedAt: minute(9).toISOString(),
        executionResults: [{ walletContext: 'virtual', executionResult: { tradeIds: ['trade-b1'] } }],
      },
      'executed once: the first outcome stands',
    );
    t.equal((await api(app, 'GET', `${inbox}?outcome=pending`, { token: dev.accessToken })).body.data.items.length, 0);
  });

  await t.test('the read model rebuilds row for row', async (t) => {
    const rows = async () => (await app.deps.pool.query('SELECT * FROM signal_inbox ORDER BY agent_id, signal_key')).rows;
    const live = await rows();
    t.equal(live.length, 4);
    await rebuild(app.deps.store, app.deps.pool, signalsProjector);
    t.same(await rows(), live);
  });
});
