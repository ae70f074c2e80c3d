// What an integrator does with the OpenAPI document: lint it with a standard linter (Redocly's
// `recommended` rules: no error), and generate a typed client from /docs/json (openapi-typescript's
// types, openapi-fetch's client) that compiles and drives the first flow against the real app:
// list agents, an administrator approves one, follow, withdraw, and a refused withdrawal whose
// typed error carries its `reason`. Sign-in needs the emailed code, so the test's helper signs in
// and hands the tokens to the client.
import { mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import ts from 'typescript';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

/** The flow, written as an integrator would against the generated `paths`; compiled, then run. */
const DRIVER = `
import createClient from 'openapi-fetch';
import type { paths } from './api.ts';

export async function firstFlow(baseUrl: string, tokens: { user: string; developer: string; admin: string }) {
  const as = (token: string) => createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } });
  const user = as(tokens.user);
  const developer = as(tokens.developer);
  const admin = as(tokens.admin);

  const listed = await developer.POST('/api/v1/developers/agents', { body: { name: 'Typed client agent', venue: 'SPOT_VENUE', minAllocationUsd: 10 } });
  if (!listed.data) throw new Error(\`listing: \${listed.response.status}\`);
  const agentId: string = listed.data.data.id;

  const approved = await admin.POST('/api/admin/developer-agents/{id}/approve', { params: { path: { id: agentId } }, body: {} });
  if (!approved.data) throw new Error(\`approval: \${approved.response.status}\`);
  const betaStatus: string = approved.data.data.betaStatus;

  const agents = await user.GET('/api/v1/agents', { params: { query: { limit: 100 } } });
  if (!agents.data) throw new Error(\`agents: \${agents.response.status}\`);
  const listedIds: string[] = agents.data.data.items.map((agent) => agent.id);

  const followed = await user.POST('/api/v1/users/me/subscriptions', { body: { agentId, allocationAmountUsd: 100 } });
  if (!followed.data) throw new Error(\`follow: \${followed.response.status}\`);

  const withdraw = (amountUsd: number) =>
    user.POST('/api/v1/users/me/subscriptions/{agentId}/allocation/withdraw', { params: { path: { agentId } }, body: { amountUsd } });
  const withdrawn = await withdraw(20);
  if (!withdrawn.data) throw new Error(\`withdrawal: \${withdrawn.response.status}\`);

  const refused = await withdraw(1_000);
  if (!refused.error) throw new Error(\`the withdrawal beyond the pool was not refused: \${refused.response.status}\`);
  // The typed reason: an enum of the operation's reasons, not a string.
  type Reason = NonNullable<typeof refused.error>['error']['reason'];
  const reasonIsTyped: string extends Reason ? false : true = true;
  const listsExceedsWithdrawable: 'EXCEEDS_WITHDRAWABLE' extends Reason ? true : false = true;
  const omitsAdministratorsReason: 'ADMIN_REQUIRED' extends Reason ? false : true = true;
  const reason: Reason = refused.error.error.reason;

  return {
    agentId,
    betaStatus,
    listedIds,
    followedUsd: followed.data.data.subscription?.allocatedUsd,
    withdrawnUsd: withdrawn.data.data.subscription?.allocatedUsd,
    refusedStatus: refused.response.status,
    refusedReason: reason,
    refusedIsExceedsWithdrawable: reason === 'EXCEEDS_WITHDRAWABLE',
    typed: reasonIsTyped && listsExceedsWithdrawable && omitsAdministratorsReason,
  };
}
`;

interface FlowResult {
  agentId: string;
  betaStatus: string;
  listedIds: string[];
  followedUsd: number | undefined;
  withdrawnUsd: number | undefined;
  refusedStatus: number;
  refusedReason: string;
  refusedIsExceedsWithdrawable: boolean;
  typed: boolean;
}

/** The compiler's complaints about `file` and what it imports, one line each. */
function compile(file: string): string[] {
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const at = d.file && d.start !== undefined ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1} ` : '';
    return `${at}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

t.test('integrators lint the OpenAPI document and generate a client that drives the first flow', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'client-admin@example.test' } });
  t.teardown(() => app.close());
  const doc = (await api(app, 'GET', '/docs/json')).body as object;

  await t.test("Redocly's recommended rules find no error", async (t) => {
    const problems = await lintFromString({ source: JSON.stringify(doc), config: await createConfig({ extends: ['recommended'] }) });
    const where = (p: (typeof problems)[number]) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`;
    t.same(problems.filter((p) => p.severity === 'error').map(where), [], 'no error');
    for (const warning of problems.filter((p) => p.severity !== 'error')) t.comment(`warning: ${where(warning)}`);
  });

  await t.test('a client generated from /docs/json compiles and drives the first flow, its refusal typed', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'openapi-client-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    // The generated client resolves openapi-fetch (and the compiler its types) from the project's dependencies.
    await symlink(await realpath(resolve('node_modules')), join(dir, 'node_modules'), 'dir');
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    await writeFile(join(dir, 'api.ts'), astToString(await openapiTS(doc as Parameters<typeof openapiTS>[0])));
    await writeFile(join(dir, 'driver.ts'), DRIVER);
    t.same(compile(join(dir, 'driver.ts')), [], 'the generated types and the driver compile (strict)');

    const [user, developer, admin] = await Promise.all([
      signIn(app, 'client-user@example.test'),
      signIn(app, 'client-developer@example.test'),
      signIn(app, 'client-admin@example.test'),
    ]);
    const { firstFlow } = (await import(pathToFileURL(join(dir, 'driver.ts')).href)) as {
      firstFlow: (baseUrl: string, tokens: Record<'user' | 'developer' | 'admin', string>) => Promise<FlowResult>;
    };
    const flow = await firstFlow(app.url, { user: user.accessToken, developer: developer.accessToken, admin: admin.accessToken });
    t.equal(flow.betaStatus, 'beta', 'approved');
    t.ok(flow.listedIds.includes(flow.agentId), 'listed among the followable agents');
    t.equal(flow.followedUsd, 100, 'followed with 100 USD');
    t.equal(flow.withdrawnUsd, 80, '20 USD withdrawn');
    t.equal(flow.refusedStatus, 400);
    t.equal(flow.refusedReason, 'EXCEEDS_WITHDRAWABLE', "the refusal's typed reason");
    t.ok(flow.refusedIsExceedsWithdrawable && flow.typed);
  });
});
