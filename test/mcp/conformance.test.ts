// The official MCP conformance runner (@modelcontextprotocol/conformance, pinned) against the real
// app's /mcp, once per revision with `--requirements`, each at its own wire (2025-11-25 sessions,
// 2026-07-28 stateless). The runner's server mode sends no credentials and has no option for one, so
// it talks to a pass-through proxy on 127.0.0.1 that adds a signed-in user's JWT bearer to every
// request and changes nothing else (Host and Origin go through as sent: the DNS-rebinding scenario
// reaches our check). Every scenario that needs no fixture of the runner must pass, and those that
// use the fixtures this process registers (test/support/mcp-fixtures.ts).
import t from 'tap';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { useConformanceFixtures } from '../support/mcp-fixtures.ts';

const RUNNER = join(process.cwd(), 'node_modules/.bin/conformance');
/** A whole requirement set runs in about 6 s here; past this the runner is stuck, not slow. */
const RUN_TIMEOUT_MS = 120_000;

/** The scenarios of each requirement set that use nothing but our own tools (no fixture tool, resource or prompt). */
const NO_FIXTURE: Record<string, string[]> = {
  // server-session-lifecycle is run unscored (added after the release): our Redis sessions pass it all the same
  '2025-11-25': ['server-initialize', 'ping', 'tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection', 'server-session-lifecycle'],
  '2026-07-28': [
    'server-stateless',
    'tools-list',
    'server-sse-multiple-streams',
    'sep-2164-resource-not-found',
    'dns-rebinding-protection',
    'input-required-result-missing-input-response',
    'input-required-result-unsupported-methods',
    'input-required-result-ignore-extra-params',
    'input-required-result-validate-input',
    // run unscored (pending against the runner's own fixture): we pass it
    'http-header-validation',
  ],
};

/** The scenarios that pass once the runner's fixtures are registered (test/support/mcp-fixtures.ts), at both revisions. */
const WITH_FIXTURES = [
  ...['tools-call-simple-text', 'tools-call-image', 'tools-call-audio', 'tools-call-embedded-resource', 'tools-call-mixed-content', 'tools-call-error', 'tools-call-with-progress'],
  ...['resources-list', 'resources-read-text', 'resources-read-binary', 'resources-templates-read'],
  ...['prompts-list', 'prompts-get-simple', 'prompts-get-with-args', 'prompts-get-embedded-resource', 'prompts-get-with-image'],
];

/** Checks of server-stateless that call the runner's diagnostic tools (test_missing_capability, test_streaming_elicitation, test_logging_tool): the runner reports them untestable without those. */
const NEEDS_FIXTURE_TOOL = new Set([
  'sep-2575-server-rejects-undeclared-capability',
  'sep-2575-missing-capability-http-400',
  'sep-2575-http-server-no-independent-requests-on-stream',
  'sep-2575-server-no-log-without-loglevel',
]);

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  errorMessage?: string;
  details?: { untestable?: boolean };
}

useConformanceFixtures();
const app = await startTestApp();
t.teardown(() => app.close());
const user = await signIn(app, 'mcp-conformance@example.test');

/** Forwards every request to the app with the user's bearer added; the answer (JSON or an event stream) streams back as it comes. */
const target = new URL(app.url);
const proxy = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${user.accessToken}` };
  const upstream = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode!, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
t.teardown(() => {
  proxy.closeAllConnections();
  proxy.close();
});
const mcpUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/mcp`;

/** Runs the runner as a child process (this process keeps serving the proxy meanwhile); its checks by scenario. */
/** The runner with `args` on this process's Node (24), not whichever `node` its shebang would find on PATH; killed after RUN_TIMEOUT_MS. */
async function runRunner(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [RUNNER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  return { code, output };
}

async function runRequirements(revision: string): Promise<{ code: number | null; output: string; checks: Map<string, Check[]> }> {
  const outDir = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
  try {
    const { code, output } = await runRunner(['server', '--url', mcpUrl, '--requirements', revision, '--timeout', '10000', '-o', outDir]);
    const checks = new Map<string, Check[]>();
    for (const dir of await readdir(outDir)) {
      const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(dir)?.[1];
      if (scenario) checks.set(scenario, JSON.parse(await readFile(join(outDir, dir, 'checks.json'), 'utf8')) as Check[]);
    }
    return { code, output, checks };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

const failures = (checks: Check[]) => checks.filter((c) => c.status === 'FAILURE');

for (const revision of Object.keys(NO_FIXTURE)) {
  t.test(`requirements ${revision}: every scenario that needs no fixture passes, and those of the fixture tools, at its own wire`, async (t) => {
    const run = await runRequirements(revision);
    t.not(run.code, null, 'the runner finished before its time-out');
    t.match(run.output, `Running requirements ${revision}`);
    // caching (2026-07-28 only) reads the fixtures' tool, resource and prompt lists
    const withFixtures = revision === '2026-07-28' ? [...WITH_FIXTURES, 'caching'] : WITH_FIXTURES;
    for (const scenario of [...NO_FIXTURE[revision]!, ...withFixtures]) {
      const checks = run.checks.get(scenario);
      if (!t.ok(checks?.length, `${scenario} ran`)) continue;
      const failed = failures(checks!).filter((c) => !(scenario === 'server-stateless' && NEEDS_FIXTURE_TOOL.has(c.id) && c.details?.untestable));
      t.same(failed.map((c) => `${c.id}: ${c.errorMessage}`), [], `${scenario}: no failed check`);
      t.ok(checks!.some((c) => c.status === 'SUCCESS'), `${scenario}: checks passed`);
    }
    const passed = [...run.checks].filter(([, c]) => failures(c).length === 0).map(([s]) => s);
    const failed = [...run.checks].filter(([, c]) => failures(c).length > 0).map(([s]) => s);
    t.comment(`${revision}: passed ${passed.join(', ')}`);
    t.comment(`${revision}: failed ${failed.join(', ')}`);
  });
}

t.test('our authorization server: the runner reads its metadata (authorization-server-metadata-endpoint)', async (t) => {
  // the runner's `authorization` leg needs no credential for this scenario; the issuer is the app itself
  const { code, output } = await runRunner(['authorization', '--url', app.url, '--scenario', 'authorization-server-metadata-endpoint']);
  if (code !== 0) t.comment(output);
  t.equal(code, 0, 'the runner passed');
  t.match(output, /Passed: 2\/2, 0 failed/);
});
