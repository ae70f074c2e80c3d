import { spawnSync } from 'node:child_process';
import t from 'tap';
import { snapshotReadModels } from '../e2e/flow.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { tradeStories, writeStories } from '../support/facts.ts';

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
  await writeStories(app, tradeStories(`${dev.userId}.${listed.body.data.id}.virtual`, 'rebuild'));
  const before = await snapshotReadModels(app);

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
