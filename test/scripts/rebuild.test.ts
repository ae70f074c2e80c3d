import { spawnSync } from 'node:child_process';
import t from 'tap';
import { snapshotReadModels } from '../e2e/steps/support.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { tradeStories, writeSignal, writeStories } from '../support/facts.ts';

function rebuildCommand(databaseUrl: string, ...names: string[]) {
  return spawnSync(process.execPath, ['--import=tsx', 'scripts/rebuild.ts', ...names], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

t.test('npm run projections:rebuild rebuilds every read model, or the ones named, with a progress bar', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const dev = await signIn(app, 'rebuild@example.test');
  const listed = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: { name: 'Rebuilt', venue: 'SPOT_VENUE' } });
  t.equal(listed.status, 201);
  const agentId = listed.body.data.id as string;
  await writeStories(app, tradeStories(`${dev.userId}.${agentId}.virtual`, 'rebuild'));
  const results = [{ poolId: `${dev.userId}.${agentId}.virtual`, status: 'executed' as const, tradeIds: ['rebuild-full'] }];
  await writeSignal(app, agentId, { signalId: 'r1', text: 'LONG $SOL entry 150 sl 140 tp 160' }, new Date('2025-03-01T12:00:00Z'), { results });
  await writeSignal(app, agentId, { signalId: 'r2', text: 'gm' }, new Date('2025-03-01T12:01:00Z'));
  const before = await snapshotReadModels(app);
  t.ok(before.trades!.length === 3 && before.signal_inbox!.length === 2, 'trades and signals to rebuild');

  const all = rebuildCommand(app.databaseUrl);
  t.equal(all.status, 0);
  t.match(all.stderr, /users\s+\|[█░]+\| \d+\/\d+ events/, 'a progress bar per read model (cli-progress draws on stderr)');
  t.match(all.stdout, /rebuilt users, agents, reviews, subscriptions/);
  t.same(await snapshotReadModels(app), before, 'the rebuilt models equal the live ones');

  const one = rebuildCommand(app.databaseUrl, 'agents');
  t.equal(one.status, 0, one.stderr);
  t.match(one.stdout, /rebuilt agents\n/);

  const unknown = rebuildCommand(app.databaseUrl, 'nope');
  t.equal(unknown.status, 1);
  t.match(unknown.stderr, /^unknown read model nope; known: users, agents/);
});
