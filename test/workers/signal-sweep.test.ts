// The signal worker's sweep: a signal recorded and never executed (its job lost, or failed for good
// and kept under its id) is queued again and executed once.
import t from 'tap';
import { Queue } from 'bullmq';
import { signalDecider, signalInstanceId } from '../../domain/signal/decide.ts';
import { bullConnection, queuePrefix } from '../../workers/index.ts';
import { SIGNAL_QUEUE } from '../../workers/signals.ts';
import { api, loadState, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { signalKeyOf, writeSignal } from '../support/facts.ts';
import { until } from '../support/until.ts';

t.test('the sweep queues again a signal whose job failed for good, and it executes once', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test', TRANSFER_RECOVERY_INTERVAL_MS: '300' } });
  const connection = bullConnection(app.deps.config.REDIS_URL);
  const queue = new Queue(SIGNAL_QUEUE, { connection, prefix: queuePrefix(app.runtime.keyPrefix) });
  t.teardown(async () => {
    await queue.close();
    connection.disconnect();
    await app.close();
  });
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  const user = await signIn(app, 'user@example.test');
  const agentId = await followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, { name: 'Swept', venue: 'PERP_VENUE', maxLeverage: 5 });
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { BTC: 50_000 } } })).status, 200);
  t.equal((await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId, allocationAmountUsd: 500 } })).status, 200);

  // A job run before its signal existed fails for good under the signal's job id…
  const signalKey = signalKeyOf('swept-1');
  const jobId = `signal-${agentId}-${signalKey}`;
  await queue.add('execute-signal', { agentId, signalKey, correlationId: 'lost' }, { jobId, attempts: 1, removeOnFail: { age: 86_400 } });
  await until('the job to fail', async () => (await queue.getJob(jobId))?.isFailed());
  // …then the signal is recorded, with no job of its own queued (as a crash between the two leaves it).
  await writeSignal(app, agentId, { signalId: 'swept-1', action: 'open', side: 'long', token: 'BTC', leverage: 2, sizeUsd: 10 }, new Date(Date.now() - 5_000));
  const { state } = await until('the sweep to execute it', async () => {
    const loaded = await loadState(app, signalDecider, signalInstanceId(agentId, signalKey));
    return loaded.state.status === 'executed' ? loaded : false;
  });
  t.equal(state.status === 'executed' && state.executed.outcome, 'executed');
  t.equal(state.status === 'executed' && state.executed.results.length, 1);
});
