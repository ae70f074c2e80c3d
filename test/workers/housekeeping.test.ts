// The housekeeping worker (workers/housekeeping.ts), started by the workers role as the service
// starts it: its purge is scheduled at HOUSEKEEPING_INTERVAL_MS, and a purge deletes what is past
// its retention and nothing else: an expired Idempotency-Key and an expired OAuth client with the
// token issued to it go, a live key and a live client stay; webhook deliveries delivered or given up
// more than WEBHOOK_RETENTION_DAYS ago go with their attempts, recent and pending ones stay. The purge is queued by the test (as the
// scheduler queues it) rather than waited for: under the whole suite's load the scheduler's next
// run came late enough to time the test out.
import { Queue } from 'bullmq';
import t from 'tap';
import { HOUSEKEEPING_QUEUE } from '../../workers/housekeeping.ts';
import { bullConnection, queuePrefix } from '../../workers/index.ts';
import { startTestApp } from '../support/app.ts';
import { until } from '../support/until.ts';

t.test('the housekeeping purge runs on its own schedule and deletes only what expired', async (t) => {
  const app = await startTestApp({ config: { HOUSEKEEPING_INTERVAL_MS: '123000' } });
  const connection = bullConnection(app.deps.config.REDIS_URL);
  const queue = new Queue(HOUSEKEEPING_QUEUE, { connection, prefix: queuePrefix(app.runtime.keyPrefix) });
  t.teardown(async () => {
    await queue.close();
    connection.disconnect();
    await app.close();
  });
  const schedulers = await queue.getJobSchedulers();
  t.match(schedulers, [{ key: 'housekeeping-purge', every: 123000 }], 'the purge is scheduled at the configured interval');
  const { pool } = app.deps;
  const past = new Date(Date.now() - 60_000).toISOString();
  const future = new Date(Date.now() + 3_600_000).toISOString();
  // One transaction: a purge that runs meanwhile sees all of these rows or none of them.
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const key = (user: string, expiresAt: string) =>
      client.query(
        `INSERT INTO idempotency_keys (user_id, key_hash, request_hash, status, lease_until, expires_at, created_at)
         VALUES ($1, 'k', 'r', 'done', now(), $2, now())`,
        [user, expiresAt],
      );
    const record = (model: string, id: string, clientId: string, expiresAt: string) =>
      client.query(`INSERT INTO oauth_records (model, id, payload, expires_at) VALUES ($1, $2, $3, $4)`, [model, id, { clientId }, expiresAt]);
    await key('expired-user', past);
    await key('live-user', future);
    await record('Client', 'old-client', 'old-client', past);
    await record('AccessToken', 'old-token', 'old-client', future); // its own expiry later: goes with its client
    await record('Client', 'live-client', 'live-client', future);
    const days = (n: number) => new Date(Date.now() - n * 24 * 3600_000).toISOString();
    const delivery = (eventId: string, status: string, lastAttemptAt: string | null) =>
      client.query(
        `INSERT INTO webhook_deliveries (agent_id, event_id, type, body, occurred_at, next_attempt_at, status, attempts, last_attempt_at)
         VALUES ('hook-agent', $1, 'follower.joined', '{}', $2, $2, $3, $4, $2)`,
        [eventId, lastAttemptAt ?? days(40), status, lastAttemptAt ? 1 : 0],
      );
    await delivery('delivered-long-ago', 'delivered', days(31));
    await delivery('failed-long-ago', 'failed', days(35));
    await delivery('delivered-lately', 'delivered', days(29));
    await delivery('pending-long-ago', 'pending', null); // never purged: still to be sent
    for (const eventId of ['delivered-long-ago', 'delivered-lately']) {
      await client.query(
        `INSERT INTO webhook_attempts (agent_id, event_id, attempt, at, status_code, duration_ms) VALUES ('hook-agent', $1, 1, now(), 200, 1)`,
        [eventId],
      );
    }
    await client.query('COMMIT');
  } finally {
    client.release();
  }

  const left = async () => ({
    keys: (await pool.query<{ user_id: string }>('SELECT user_id FROM idempotency_keys ORDER BY user_id')).rows.map((r) => r.user_id),
    records: (await pool.query<{ id: string }>('SELECT id FROM oauth_records ORDER BY id')).rows.map((r) => r.id),
    deliveries: (await pool.query<{ event_id: string }>('SELECT event_id FROM webhook_deliveries ORDER BY event_id')).rows.map((r) => r.event_id),
    attempts: (await pool.query<{ event_id: string }>('SELECT event_id FROM webhook_attempts ORDER BY event_id')).rows.map((r) => r.event_id),
  });
  await queue.add('purge', {});
  await until('the purge to run', async () => {
    const now = await left();
    return now.keys.length === 1 && now.records.length === 1 && now.deliveries.length === 2;
  });
  t.same(
    await left(),
    { keys: ['live-user'], records: ['live-client'], deliveries: ['delivered-lately', 'pending-long-ago'], attempts: ['delivered-lately'] },
    'only the live key and client, and the recent and pending deliveries, are left',
  );
});
