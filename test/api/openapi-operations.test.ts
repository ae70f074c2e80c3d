// The OpenAPI document as a client generator reads it: each operation's error statuses carry the
// envelope with the reasons it can give there (an enum, with their codes), its security (none on a
// public route) and its request headers; and what the real app refuses is what its operation lists.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import ts from 'typescript';
import type { ErrorReason } from '../../domain/shared/errors.ts';
import { codeOf, httpStatus } from '../../api/plugins/error-status.ts';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../infra/signing/webhook.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';

interface Schema {
  type?: string;
  required?: string[];
  enum?: unknown[];
  properties?: Record<string, Schema>;
}
interface Operation {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ in: string; name: string }>;
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
type Paths = Record<string, Record<string, Operation>>;

const WITHDRAW = '/api/v1/users/me/subscriptions/{agentId}/allocation/withdraw';
const APPROVE = '/api/admin/developer-agents/{id}/approve';

const errorSchemaOf = (op: Operation, status: string) => op.responses[status]?.content?.['application/json']?.schema;
/** The reasons an operation lists at a status. */
const reasonsAt = (op: Operation, status: number | string) =>
  (errorSchemaOf(op, String(status))?.properties?.error?.properties?.reason?.enum ?? []) as string[];
const errorStatuses = (op: Operation) => Object.keys(op.responses).filter((s) => /^[45]\d\d$/.test(s));
const headerNames = (op: Operation) => (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name.toLowerCase());

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);
const tsFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
const literal = (node: ts.Node | undefined) => (node && ts.isStringLiteralLike(node) ? node.text : undefined);
const propertyOf = (object: ts.ObjectLiteralExpression, name: string) =>
  object.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === name)?.initializer;

/** What a route registration in the source says and does: the commands it declares and dispatches, the reasons it refuses with by name. */
interface RouteSource {
  at: string;
  method: string;
  path?: string;
  declared: string[];
  dispatched: string[];
  refused: string[];
}

/** Every `app.<method>(url, options, handler)` of api/routes, read with the TypeScript parser. */
function routeSources(): RouteSource[] {
  return tsFiles('api/routes').flatMap((file) => {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const found: RouteSource[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && METHODS.has(node.expression.name.text)) {
        const options = node.arguments.find(ts.isObjectLiteralExpression);
        const config = options && propertyOf(options, 'config');
        const schema = options && propertyOf(options, 'schema');
        const hidden = schema && ts.isObjectLiteralExpression(schema) && propertyOf(schema, 'hide')?.kind === ts.SyntaxKind.TrueKeyword;
        if (options && !hidden) {
          const dispatches = config && ts.isObjectLiteralExpression(config) ? propertyOf(config, 'dispatches') : undefined;
          const route: RouteSource = {
            at: `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`,
            method: node.expression.name.text,
            path: literal(node.arguments[0])?.replace(/:(\w+)/g, '{$1}'),
            declared: dispatches && ts.isArrayLiteralExpression(dispatches) ? dispatches.elements.flatMap((e) => literal(e) ?? []) : [],
            dispatched: [],
            refused: [],
          };
          const calls = (inner: ts.Node): void => {
            if (ts.isCallExpression(inner)) {
              const callee = inner.expression;
              const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
              const first = literal(inner.arguments[0]);
              if (name === 'dispatch' && first) route.dispatched.push(first);
              if (name === 'refuse' && first) route.refused.push(first);
            }
            ts.forEachChild(inner, calls);
          };
          node.arguments.forEach(calls);
          found.push(route);
          return;
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  });
}

t.test('the OpenAPI document lists what each operation answers, takes and refuses', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'openapi-admin@example.test' } });
  t.teardown(() => app.close());
  const doc = (await api(app, 'GET', '/docs/json')).body as {
    paths: Paths;
    components: { securitySchemes: Record<string, { type: string; in?: string; name?: string }> };
  };
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })),
  );
  const op = (method: string, path: string) => doc.paths[path]![method]!;

  await t.test('every error response is the envelope, its reasons those of its status and its codes theirs', async (t) => {
    const described = operations.filter(({ op }) => errorStatuses(op).length > 0);
    t.ok(described.length > 50, `${described.length} operations describe their refusals`);
    const problems = described.flatMap(({ where, op }) =>
      errorStatuses(op).flatMap((status) => {
        const schema = errorSchemaOf(op, status)!;
        const reasons = reasonsAt(op, status) as ErrorReason[];
        const wrong: string[] = [];
        if (JSON.stringify(schema.required) !== JSON.stringify(['success', 'error'])) wrong.push('not the envelope');
        if (JSON.stringify(schema.properties?.success?.enum) !== '[false]') wrong.push('success is not false');
        if (reasons.length === 0) wrong.push('no reasons');
        const elsewhere = reasons.filter((r) => httpStatus[r] !== Number(status));
        if (elsewhere.length > 0) wrong.push(`reasons of other statuses: ${elsewhere.join(', ')}`);
        if (JSON.stringify(schema.properties?.error?.properties?.code?.enum) !== JSON.stringify([...new Set(reasons.map(codeOf))]))
          wrong.push('codes not those of its reasons');
        return wrong.map((w) => `${where} ${status}: ${w}`);
      }),
    );
    t.same(problems, []);
  });

  await t.test("an operation's reasons come from its access, its input, its hooks and the commands it dispatches", async (t) => {
    const withdraw = op('post', WITHDRAW);
    t.ok(
      ['VALIDATION_FAILED', 'MALFORMED_REQUEST', 'EXCEEDS_WITHDRAWABLE'].every((r) => reasonsAt(withdraw, 400).includes(r)),
      'input and the command at 400',
    );
    t.ok(reasonsAt(withdraw, 401).includes('AUTHENTICATION_REQUIRED'), 'a protected route: 401');
    t.same(
      reasonsAt(withdraw, 403).sort(),
      ['INSUFFICIENT_SCOPE', 'WALLET_FROZEN'],
      "a scope its API keys and OAuth tokens may lack; the wallet frozen; not an administrators' route",
    );
    t.ok(reasonsAt(withdraw, 404).includes('SUBSCRIPTION_NOT_FOUND'));
    t.ok(reasonsAt(withdraw, 409).includes('ALLOCATION_FUNDS_IN_USE'));
    t.ok(reasonsAt(withdraw, 429).includes('RATE_LIMITED'));
    t.ok(reasonsAt(withdraw, 503).includes('BUSY'), 'a command: contention');
    t.ok(reasonsAt(withdraw, 413).includes('BODY_TOO_LARGE'), 'a body: too large');
    t.notOk(reasonsAt(withdraw, 422).includes('IDEMPOTENCY_KEY_REUSED'), 'no Idempotency-Key here');
    t.notOk(headerNames(withdraw).includes('idempotency-key'));

    const approve = op('post', APPROVE);
    t.ok(reasonsAt(approve, 403).includes('ADMIN_REQUIRED'), "an administrators' route");
    t.ok(reasonsAt(approve, 409).includes('REVIEW_MOVE_NOT_ALLOWED'), "the review's refusal");

    const agents = op('get', '/api/v1/agents');
    t.same(
      errorStatuses(agents).filter((s) => ['403', '404', '409', '413', '415', '422'].includes(s)),
      [],
      'a public read: no scope, no body, no command',
    );
    t.same(reasonsAt(op('get', '/api/v1/agents/{id}'), 404), ['AGENT_NOT_FOUND'], "a route's own refusal");

    const buy = op('post', '/api/v1/wallet/buy');
    t.ok(headerNames(buy).includes('idempotency-key'), 'Idempotency-Key where it is honoured');
    t.ok(['IDEMPOTENCY_KEY_REUSED', 'SWAP_FAILED'].every((r) => reasonsAt(buy, 422).includes(r)));
    t.ok(reasonsAt(buy, 409).includes('TRADE_IN_PROGRESS'));
  });

  await t.test('security: the modes a route takes, none on a public route; the signing headers', async (t) => {
    t.same(
      operations.filter(({ op }) => !Array.isArray(op.security)).map(({ where }) => where),
      [],
      'every operation states its security',
    );
    t.same(op('get', '/api/v1/agents').security, [], 'a public route takes none');
    const signed = { apiKey: [], apiSignature: [], apiTimestamp: [] };
    t.same(op('post', WITHDRAW).security, [{ bearerAuth: [] }, signed, { oauth2: ['subscriptions:write'] }], 'JWT, a signed API key, OAuth with the scope');
    const schemes = doc.components.securitySchemes;
    t.same(
      [schemes.apiSignature, schemes.apiTimestamp].map((s) => [s!.type, s!.in, s!.name]),
      [
        ['apiKey', 'header', 'x-signature'],
        ['apiKey', 'header', 'x-timestamp'],
      ],
      "an API key's signing headers",
    );
    const webhook = op('post', '/api/v1/signals/{agentId}');
    t.same(webhook.security, [], 'the webhook: signed by its own headers');
    t.ok(
      [TIMESTAMP_HEADER, SIGNATURE_HEADER].every((h) => headerNames(webhook).includes(h)),
      'the webhook signing headers',
    );
    t.ok(reasonsAt(webhook, 401).includes('INVALID_SIGNATURE'));
  });

  await t.test('the source agrees: a route names the commands it dispatches, and its operation lists the reasons it refuses with', async (t) => {
    const routes = routeSources();
    t.ok(routes.filter((r) => r.dispatched.length > 0).length > 30, `${routes.length} routes read, those dispatching found`);
    t.same(
      routes.flatMap((r) => r.dispatched.filter((c) => !r.declared.includes(c)).map((c) => `${r.at} dispatches ${c} without naming it in config.dispatches`)),
      [],
    );
    const documented = (r: RouteSource) => {
      const operation = r.path ? doc.paths[r.path]?.[r.method] : undefined;
      return operation ? errorStatuses(operation).flatMap((status) => reasonsAt(operation, status)) : undefined;
    };
    t.same(
      routes.flatMap((r) =>
        r.refused
          .filter((reason) => !(documented(r) ?? [reason]).includes(reason))
          .map((reason) => `${r.at} refuses with ${reason}, not listed on its operation`),
      ),
      [],
    );
  });

  await t.test('operationIds are unique, for the method names of generated SDKs', async (t) => {
    const ids = operations.map(({ op }) => op.operationId).filter((id): id is string => id !== undefined);
    t.equal(new Set(ids).size, ids.length);
    t.equal(op('post', WITHDRAW).operationId, 'postApiV1UsersMeSubscriptionsByAgentIdAllocationWithdraw');
  });

  await t.test('what the app refuses is listed on its operation, at the status it answers', async (t) => {
    const admin = await signIn(app, 'openapi-admin@example.test');
    const dev = await signIn(app, 'openapi-dev@example.test');
    const user = await signIn(app, 'openapi-user@example.test');
    const tokens = { developer: dev.accessToken, admin: admin.accessToken };
    const agentId = await followableAgent(app, tokens, { name: 'OpenAPI refusals', venue: 'SPOT_VENUE', minAllocationUsd: 10 }, { live: true });
    const other = await followableAgent(app, tokens, { name: 'OpenAPI unfollowed', venue: 'SPOT_VENUE', minAllocationUsd: 10 }, { live: true });
    t.equal((await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } })).status, 200);
    const withdraw = (id: string, body: unknown, token?: string) =>
      api(app, 'POST', `/api/v1/users/me/subscriptions/${id}/allocation/withdraw`, { body, ...(token ? { token } : {}) });
    const refusals: Array<[string, string, Awaited<ReturnType<typeof api>>, ErrorReason]> = [
      ['post', WITHDRAW, await withdraw(agentId, { amountUsd: 1 }), 'AUTHENTICATION_REQUIRED'],
      ['post', WITHDRAW, await withdraw(agentId, {}, user.accessToken), 'VALIDATION_FAILED'],
      ['post', WITHDRAW, await withdraw(other, { amountUsd: 1 }, user.accessToken), 'SUBSCRIPTION_NOT_FOUND'],
      ['post', WITHDRAW, await withdraw(agentId, { amountUsd: 1_000 }, user.accessToken), 'EXCEEDS_WITHDRAWABLE'],
      ['post', APPROVE, await api(app, 'POST', `/api/admin/developer-agents/${agentId}/approve`, { token: user.accessToken, body: {} }), 'ADMIN_REQUIRED'],
      [
        'post',
        APPROVE,
        await api(app, 'POST', `/api/admin/developer-agents/${agentId}/approve`, { token: admin.accessToken, body: {} }),
        'REVIEW_MOVE_NOT_ALLOWED',
      ],
      ['get', '/api/v1/agents/{id}', await api(app, 'GET', '/api/v1/agents/no-such-agent'), 'AGENT_NOT_FOUND'],
      [
        'post',
        '/api/v1/users/me/subscriptions',
        await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId: 'no-such-agent', allocationAmountUsd: 100 } }),
        'AGENT_NOT_FOUND',
      ],
    ];
    for (const [method, path, res, reason] of refusals) {
      t.equal(res.body?.error?.reason, reason, `${method.toUpperCase()} ${path}: ${JSON.stringify(res.body)}`);
      t.ok(reasonsAt(op(method, path), res.status).includes(reason), `${method.toUpperCase()} ${path} lists ${reason} at ${res.status}`);
    }
  });
});
