// The webhook worker's promises, driven directly (the app's webhook sweep runs hourly, so nothing
// else sends): one in flight per agent however many jobs run for it, in the log's order, each event
// once when the receiver accepts it; a lease left by a worker that died mid-attempt expires and the
// event is claimed again, as the same attempt; an event given up after 3 days disables the webhook,
// but a redelivery the developer asked for, of an event days old, failing does not; a job that
// delivered its full run queues the rest at once, without waiting for the next sweep; two reports of
// one delivery in one batched statement record the delivered one only, and a give-up not recorded disables nothing.
import t from 'tap';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { claimHead, dueAgents, recordAttempt, recordAttempts } from '../../projections/webhooks/queries.ts';
import { Queue } from 'bullmq';
import { deliverToAgent, RUN_LENGTH, WEBHOOKS_QUEUE, type WebhookOutbox, type WebhookWorkerDeps } from '../../workers/webhooks.ts';
import { createWebhookOutbox } from '../../workers/webhook-outbox.ts';
import { bullConnection, queuePrefix } from '../../workers/index.ts';
import { api } from '../support/app.ts';
import { listedFollowableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { until } from '../support/until.ts';
import { readDelivery, webhookTestApp } from '../support/webhooks.ts';

const SUBS = '/api/v1/users/me/subscriptions';

t.test('the webhook worker', async (t) => {
  // the app's sweep runs hourly: only the deliverToAgent calls below send
  const { app, host, developer: dev, tokens } = await webhookTestApp(t, 'worker-dev@example.test', { workers: 'driven' });
  let inFlight = 0;
  let mostInFlight = 0;
  const types: string[] = [];
  host.serve('/slow', (req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    readDelivery(req, (body) => {
      types.push(body.type);
      setTimeout(() => {
        inFlight--;
        res.writeHead(204).end();
      }, 100);
    });
  });
  const { pool, config } = app.deps;
  const user = await signIn(app, 'worker-user@example.test');
  const deps: WebhookWorkerDeps = {
    dispatch: app.deps.dispatch,
    clock: app.deps.clock,
    config,
    webhooks: app.deps.webhooks,
    webhookOutbox: {
      dueAgents: (now, limit) => dueAgents(pool, now, limit),
      claimHead: (agentId, now, leaseMs) => claimHead(pool, config.JWT_SECRET, agentId, now, leaseMs),
      recordAttempt: (claimed, attempt) => recordAttempt(pool, claimed, attempt),
    },
  };
  const followAndStop = async (agentId: string, times: number) => {
    for (let i = 0; i < times; i++) {
      t.equal((await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } })).status, 200);
      t.equal((await api(app, 'DELETE', `${SUBS}/${agentId}`, { token: user.accessToken })).status, 200);
    }
  };
  const pending = async (agentId: string) =>
    Number((await pool.query(`SELECT count(*) AS n FROM webhook_deliveries WHERE agent_id = $1 AND status = 'pending'`, [agentId])).rows[0].n);

  await t.test('four jobs for one agent at once: one request in flight, the events in order, each once', async (t) => {
    const agent = await listedFollowableAgent(app, tokens, { name: 'Busy', venue: 'SPOT_VENUE', webhookUrl: `${host.origin}/slow` });
    await followAndStop(agent.agentId, 3);
    await until('six deliveries in the outbox', async () => (await pending(agent.agentId)) === 6);
    t.same(
      (await dueAgents(pool, app.deps.clock.now(), 10)).map((d) => d.agentId),
      [agent.agentId],
      'the agent is due',
    );
    const runs = await Promise.all([1, 2, 3, 4].map(() => deliverToAgent(deps, agent.agentId)));
    const more = await deliverToAgent(deps, agent.agentId);
    t.equal(runs.reduce((a, b) => a + b, 0) + more, 6, 'six delivered in all');
    t.equal(mostInFlight, 1, 'never two requests at once');
    t.same(types, ['follower.joined', 'follower.left', 'follower.joined', 'follower.left', 'follower.joined', 'follower.left']);
    t.equal(await pending(agent.agentId), 0);
    t.same(await dueAgents(pool, app.deps.clock.now(), 10), [], 'nothing due');
  });

  await t.test('a lease left by a dead worker: held until it expires, then the same attempt is claimed again', async (t) => {
    const agent = await listedFollowableAgent(app, tokens, { name: 'Leased', venue: 'SPOT_VENUE', webhookUrl: `${host.origin}/slow` });
    await followAndStop(agent.agentId, 1);
    await until('two deliveries in the outbox', async () => (await pending(agent.agentId)) === 2);
    const now = app.deps.clock.now();
    const first = await claimHead(pool, config.JWT_SECRET, agent.agentId, now, 5_000);
    t.match(first, { attempts: 0, url: `${host.origin}/slow` });
    t.equal(JSON.parse(first!.body).type, 'follower.joined', 'the oldest first');
    t.equal(await claimHead(pool, config.JWT_SECRET, agent.agentId, now, 5_000), undefined, 'leased: not claimed again, and not the next event either');
    t.same(await dueAgents(pool, now, 10), [], 'not due while leased');
    const later = new Date(now.getTime() + 6_000);
    const again = await claimHead(pool, config.JWT_SECRET, agent.agentId, later, 5_000);
    t.match(again, { eventId: first!.eventId, attempts: 0, body: first!.body }, 'after the lease: the same event, the same bytes');
    t.equal(await recordAttempt(pool, again!, { at: later, statusCode: 204, error: null, durationMs: 1, outcome: { delivered: true } }), true);
    const late = await recordAttempt(pool, first!, {
      at: later,
      statusCode: 204,
      error: null,
      durationMs: 1,
      outcome: { delivered: false, nextAttemptAt: null },
    });
    t.equal(late, false, 'the dead worker’s late report is not recorded, so its worker decides nothing on it (no disabling)');
    const { rows } = await pool.query('SELECT attempt FROM webhook_attempts WHERE agent_id = $1 AND event_id = $2', [agent.agentId, first!.eventId]);
    t.same(rows, [{ attempt: 1 }], 'the late report of the dead worker’s attempt changes nothing');
    t.equal(await pending(agent.agentId), 1, 'the next event is due now');
  });

  await t.test('an event given up after 3 days of failures disables the webhook; the later events queue', async (t) => {
    const agent = await listedFollowableAgent(app, tokens, { name: 'Failing', venue: 'SPOT_VENUE', webhookUrl: 'https://10.0.0.1/hook' });
    await followAndStop(agent.agentId, 1);
    await until('two deliveries in the outbox', async () => (await pending(agent.agentId)) === 2);
    const inFourDays = { now: () => new Date(app.deps.clock.now().getTime() + 4 * 24 * 3600_000) };
    t.equal(await deliverToAgent({ ...deps, clock: inFourDays }, agent.agentId), 0);
    const { rows } = await pool.query('SELECT type, status, attempts, last_error FROM webhook_deliveries WHERE agent_id = $1 ORDER BY seq', [agent.agentId]);
    t.match(rows, [
      { type: 'follower.joined', status: 'failed', attempts: 1, last_error: 'address_not_allowed' },
      { type: 'follower.left', status: 'pending', attempts: 0 },
    ]);
    const disabled = await pool.query(`SELECT data, metadata->>'actor' AS actor FROM events WHERE stream_name = $1 AND event_type = 'AgentWebhookDisabled'`, [
      `agent-${agent.agentId}`,
    ]);
    t.match(disabled.rows, [{ data: { reason: 'failing' }, actor: 'system:webhooks' }]);
    await until('the outbox sees it disabled', async () => !(await dueAgents(pool, inFourDays.now(), 10)).some((d) => d.agentId === agent.agentId));
    t.equal(await deliverToAgent({ ...deps, clock: inFourDays }, agent.agentId), 0, 'nothing sent while disabled');
    t.equal(await pending(agent.agentId), 1, 'the later event still queued');
  });
  await t.test('a redelivery of an event days old that fails: given up again, the webhook stays enabled', async (t) => {
    const agent = await listedFollowableAgent(app, tokens, { name: 'Old event', venue: 'SPOT_VENUE', webhookUrl: 'https://10.0.0.1/hook' });
    await followAndStop(agent.agentId, 1);
    await until('two deliveries in the outbox', async () => (await pending(agent.agentId)) === 2);
    const inFourDays = { now: () => new Date(app.deps.clock.now().getTime() + 4 * 24 * 3600_000) };
    const disabledEvents = async () =>
      Number(
        (await pool.query(`SELECT count(*) AS n FROM events WHERE stream_name = $1 AND event_type = 'AgentWebhookDisabled'`, [`agent-${agent.agentId}`]))
          .rows[0].n,
      );
    const path = `/api/v1/developers/agents/${agent.agentId}/webhook-deliveries`;
    await deliverToAgent({ ...deps, clock: inFourDays }, agent.agentId);
    t.equal(await disabledEvents(), 1, 'the organic schedule gave the head up: disabled');
    t.equal((await api(app, 'POST', `${path}/enable`, { token: dev.accessToken })).status, 200);
    await until('the outbox sees it enabled', async () => (await dueAgents(pool, inFourDays.now(), 10)).some((d) => d.agentId === agent.agentId));
    await deliverToAgent({ ...deps, clock: inFourDays }, agent.agentId);
    t.equal(await disabledEvents(), 2, 'the next event, as old, given up by its own schedule: disabled again');
    t.equal((await api(app, 'POST', `${path}/enable`, { token: dev.accessToken })).status, 200);
    await until(
      'enabled again',
      async () => (await pool.query('SELECT disabled_at FROM webhook_endpoints WHERE agent_id = $1', [agent.agentId])).rows[0].disabled_at === null,
    );

    const listed = (await api(app, 'GET', path, { token: dev.accessToken })).body.data.items as Array<{ id: string; type: string; status: string }>;
    const joined = listed.find((d) => d.type === 'follower.joined')!;
    t.equal(joined.status, 'failed');
    t.equal((await api(app, 'POST', `${path}/${joined.id}/redeliver`, { token: dev.accessToken })).status, 200);
    t.equal(await deliverToAgent({ ...deps, clock: inFourDays }, agent.agentId), 0);
    const { rows } = await pool.query('SELECT type, status, attempts, redelivered FROM webhook_deliveries WHERE agent_id = $1 ORDER BY seq', [agent.agentId]);
    t.match(rows[0], { type: 'follower.joined', status: 'failed', attempts: 2, redelivered: false }, 'the one attempt failed: given up again');
    t.equal(await disabledEvents(), 2, 'no new AgentWebhookDisabled');
    t.equal((await pool.query('SELECT disabled_at FROM webhook_endpoints WHERE agent_id = $1', [agent.agentId])).rows[0].disabled_at, null, 'still enabled');
  });
  await t.test('two reports of one delivery in one statement: the delivered one is recorded, the other is not', async (t) => {
    const agent = await listedFollowableAgent(app, tokens, { name: 'Reported twice', venue: 'SPOT_VENUE', webhookUrl: `${host.origin}/slow` });
    await followAndStop(agent.agentId, 1);
    await until('two deliveries in the outbox', async () => (await pending(agent.agentId)) === 2);
    const now = app.deps.clock.now();
    const later = new Date(now.getTime() + 6_000);
    const gaveUp = { at: later, statusCode: 500, error: null, durationMs: 1, outcome: { delivered: false, nextAttemptAt: null } } as const;
    const retry = { ...gaveUp, outcome: { delivered: false, nextAttemptAt: new Date(later.getTime() + 60_000) } } as const;
    const ok = { at: later, statusCode: 204, error: null, durationMs: 2, outcome: { delivered: true } } as const;
    const rowOf = async (eventId: string) => ({
      delivery: (await pool.query('SELECT status, attempts FROM webhook_deliveries WHERE agent_id = $1 AND event_id = $2', [agent.agentId, eventId])).rows,
      attempts: (await pool.query('SELECT attempt, status_code FROM webhook_attempts WHERE agent_id = $1 AND event_id = $2', [agent.agentId, eventId])).rows,
    });

    const first = await claimHead(pool, config.JWT_SECRET, agent.agentId, now, 5_000);
    const again = await claimHead(pool, config.JWT_SECRET, agent.agentId, later, 5_000);
    t.equal(again?.eventId, first!.eventId, 'the same delivery, claimed again after its lease');
    const reports = [
      { claimed: first!, result: gaveUp },
      { claimed: again!, result: ok },
    ];
    t.same(await recordAttempts(pool, reports), [false, true], 'the given-up report, first in the batch, is not recorded');
    t.same(await rowOf(first!.eventId), { delivery: [{ status: 'delivered', attempts: 1 }], attempts: [{ attempt: 1, status_code: 204 }] });

    const next = await claimHead(pool, config.JWT_SECRET, agent.agentId, later, 5_000);
    t.not(next?.eventId, first!.eventId, 'the next event');
    const twice = [
      { claimed: next!, result: ok },
      { claimed: next!, result: retry },
      { claimed: next!, result: ok },
    ];
    t.same(await recordAttempts(pool, twice), [true, false, false], 'the first delivered report, and only it');
    t.same(await rowOf(next!.eventId), { delivery: [{ status: 'delivered', attempts: 1 }], attempts: [{ attempt: 1, status_code: 204 }] });
  });

  await t.test('a give-up batched with a delivered report of the same delivery disables nothing', async (t) => {
    const agent = await listedFollowableAgent(app, tokens, { name: 'Given up twice', venue: 'SPOT_VENUE', webhookUrl: 'https://10.0.0.1/hook' });
    await followAndStop(agent.agentId, 1);
    await until('two deliveries in the outbox', async () => (await pending(agent.agentId)) === 2);
    const inFourDays = { now: () => new Date(app.deps.clock.now().getTime() + 4 * 24 * 3600_000) };
    const outbox = createWebhookOutbox(pool, config.JWT_SECRET);
    // another worker whose lease the claim outlived reports the same delivery delivered, in the same batch (the outbox's one statement)
    const recordBeside: WebhookOutbox['recordAttempt'] = async (claimed, result) => {
      const delivered = { at: result.at, statusCode: 204, error: null, durationMs: 1, outcome: { delivered: true } } as const;
      const [, mine] = await Promise.all([outbox.recordAttempt(claimed, delivered), outbox.recordAttempt(claimed, result)]);
      return mine;
    };
    t.equal(await deliverToAgent({ ...deps, clock: inFourDays, webhookOutbox: { ...outbox, recordAttempt: recordBeside } }, agent.agentId), 0);
    const { rows } = await pool.query('SELECT type, status, attempts FROM webhook_deliveries WHERE agent_id = $1 ORDER BY seq', [agent.agentId]);
    t.match(rows, [
      { type: 'follower.joined', status: 'delivered', attempts: 1 },
      { type: 'follower.left', status: 'pending', attempts: 0 },
    ]);
    const disabled = await pool.query(`SELECT 1 FROM events WHERE stream_name = $1 AND event_type = 'AgentWebhookDisabled'`, [`agent-${agent.agentId}`]);
    t.equal(disabled.rowCount, 0, 'the give-up was not recorded: the webhook stays enabled');
  });

  await t.test('an agent deleted just after a delivery (its signing secret remembered): nothing more is sent once its deletion is projected', async (t) => {
    const got: string[] = [];
    host.serve('/deleted', (req: IncomingMessage, res: ServerResponse) => {
      readDelivery(req, (body) => {
        got.push(body.type);
        res.writeHead(204).end();
      });
    });
    const agent = await listedFollowableAgent(app, tokens, { name: 'Deleted', venue: 'SPOT_VENUE', webhookUrl: `${host.origin}/deleted` });
    t.equal((await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId: agent.agentId, allocationAmountUsd: 100 } })).status, 200);
    await until('the follow in the outbox', async () => (await pending(agent.agentId)) === 1);
    t.equal(await deliverToAgent(deps, agent.agentId), 1, 'delivered: the worker read the signing secret and remembers it for 30 s');
    t.equal((await api(app, 'DELETE', `${SUBS}/${agent.agentId}`, { token: user.accessToken })).status, 200);
    await until('the leave in the outbox', async () => (await pending(agent.agentId)) === 1);
    t.equal((await api(app, 'DELETE', `/api/v1/agents/${agent.agentId}`, { token: dev.accessToken })).status, 200);
    await until(
      'the deletion projected',
      async () => (await pool.query('SELECT deleted_at FROM webhook_endpoints WHERE agent_id = $1', [agent.agentId])).rows[0].deleted_at !== null,
    );
    t.equal(await deliverToAgent(deps, agent.agentId), 0);
    t.same(got, ['follower.joined'], 'the leave was not sent');
    const { rows } = await pool.query('SELECT type, status, attempts, last_error FROM webhook_deliveries WHERE agent_id = $1 ORDER BY seq', [agent.agentId]);
    t.match(rows, [
      { type: 'follower.joined', status: 'delivered' },
      { type: 'follower.left', status: 'failed', attempts: 1, last_error: 'the agent was deleted' },
    ]);
    const disabled = await pool.query(`SELECT 1 FROM events WHERE stream_name = $1 AND event_type = 'AgentWebhookDisabled'`, [`agent-${agent.agentId}`]);
    t.equal(disabled.rowCount, 0, 'a deletion is no failure of the webhook: not disabled');
  });

  await t.test('a job that delivers a full run queues the rest at once: more than a run delivered with no sweep to come', async (t) => {
    const got: string[] = [];
    host.serve('/many', (req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        got.push(String(req.headers['x-svc-webhook-id']));
        res.writeHead(204).end();
      });
    });
    const agent = await listedFollowableAgent(app, tokens, { name: 'Many', venue: 'SPOT_VENUE', webhookUrl: `${host.origin}/many` });
    const events = RUN_LENGTH + 6;
    await followAndStop(agent.agentId, events / 2);
    await until('the events in the outbox', async () => (await pending(agent.agentId)) === events);
    const connection = bullConnection(config.REDIS_URL);
    const queue = new Queue(WEBHOOKS_QUEUE, { connection, prefix: queuePrefix(app.runtime.keyPrefix) });
    t.teardown(async () => {
      await queue.close();
      connection.disconnect();
    });
    // one job, as a sweep queues it; the app's own sweep runs hourly, so only the first job's follow-up can send the rest
    await queue.add('deliver', { agentId: agent.agentId }, { removeOnComplete: true, removeOnFail: true });
    await until('every event delivered', async () => (await pending(agent.agentId)) === 0, 60_000);
    t.equal(got.length, events, `${events} requests, more than one run of ${RUN_LENGTH}`);
    t.equal(new Set(got).size, events, 'each event once');
  });
});
