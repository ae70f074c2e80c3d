// The official MCP conformance runner (@modelcontextprotocol/conformance, pinned) against the real
// app's /mcp, once per revision with `--requirements`, each at its own wire (2025-11-25 sessions,
// 2026-07-28 stateless). The runner's server mode sends no credentials and has no option for one, so
// it talks to a pass-through proxy on 127.0.0.1 that adds a signed-in user's JWT bearer to every
// request and changes nothing else (Host and Origin go through as sent: the DNS-rebinding scenario
// reaches our check). The runner's fixtures are registered in this process (test/support/mcp-fixtures.ts).
// Every scenario each revision requires must pass; a scenario the runner runs but does not score
// (an extension, pending or added after the release) may fail only as test/mcp/conformance-baseline.txt
// says, and a line there that no longer fails is stale.
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

const REVISIONS = ['2025-11-25', '2026-07-28'];

/** Unscored scenarios that fail against us, each with its reason: `<revision> <scenario> <reason>` a line. */
const BASELINE = join(import.meta.dirname, 'conformance-baseline.txt');

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

const baseline = new Map<string, string>();
for (const line of (await readFile(BASELINE, 'utf8')).split('\n')) {
  const entry = /^(\S+) (\S+) (.+)$/.exec(line);
  if (entry && !line.startsWith('#')) baseline.set(`${entry[1]} ${entry[2]}`, entry[3]!);
}

/** The runner's own account of what it ran: how many scenarios the set has, and which of them it does not score (with why). */
function runnerAccount(output: string, revision: string) {
  const total = Number(new RegExp(`Running requirements ${revision} \\((\\d+) scenarios\\)`).exec(output)?.[1]);
  const notScored = new Map([...output.matchAll(/^ {2}[✓✗] (\S+) \((.+)\)$/gmu)].map((m) => [m[1]!, m[2]!]));
  return { total, notScored };
}

for (const revision of REVISIONS) {
  t.test(`requirements ${revision}: every required scenario passes at its own wire; an unscored one fails only as the baseline says`, async (t) => {
    const run = await runRequirements(revision);
    t.not(run.code, null, 'the runner finished before its time-out');
    const { total, notScored } = runnerAccount(run.output, revision);
    t.ok(total > 0, `the runner named the set's size (${total})`);
    t.equal(run.checks.size, total, 'every scenario of the set ran and reported');
    const required = [...run.checks.keys()].filter((s) => !notScored.has(s));
    for (const scenario of required) {
      const checks = run.checks.get(scenario)!;
      t.same(
        failures(checks).map((c) => `${c.id}: ${c.errorMessage}`),
        [],
        `${scenario}: no failed check`,
      );
      t.ok(
        checks.some((c) => c.status === 'SUCCESS'),
        `${scenario}: checks passed`,
      );
      t.notOk(baseline.has(`${revision} ${scenario}`), `${scenario}: required, so never in the baseline`);
    }
    t.equal(run.code, 0, 'the runner scores the set as passed');
    for (const [scenario, why] of notScored) {
      const failing = failures(run.checks.get(scenario) ?? []).length > 0;
      if (failing) t.ok(baseline.has(`${revision} ${scenario}`), `${scenario} (${why}, unscored) fails: the baseline says why`);
      else t.notOk(baseline.has(`${revision} ${scenario}`), `${scenario} (${why}, unscored) passes: not in the baseline`);
    }
    for (const key of baseline.keys())
      if (key.startsWith(`${revision} `)) t.ok(notScored.has(key.slice(revision.length + 1)), `baseline ${key}: a scenario the runner ran unscored`);
    const failed = [...run.checks].filter(([, c]) => failures(c).length > 0).map(([s]) => s);
    t.comment(`${revision}: ${required.length} required, all passed; unscored ${[...notScored.keys()].join(', ')}; failed ${failed.join(', ') || 'none'}`);
  });
}

t.test('our authorization server: the runner reads its metadata (authorization-server-metadata-endpoint)', async (t) => {
  // the runner's `authorization` leg needs no credential for this scenario; the issuer is the app itself
  const { code, output } = await runRunner(['authorization', '--url', app.url, '--scenario', 'authorization-server-metadata-endpoint']);
  if (code !== 0) t.comment(output);
  t.equal(code, 0, 'the runner passed');
  t.match(output, /Passed: 2\/2, 0 failed/);
});
