import t, { type Test } from 'tap';
import { signWebhookBody } from '../../infra/signing/webhook.ts';
import { api, startTestApp, type TestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

// The rule "text PostgreSQL cannot store is a 400 naming the field, before anything runs", over
// every operation of the OpenAPI document: every string of each request body (values, and the
// keys of free-form objects), every query and path parameter, every header parameter.

const ADMIN = 'admin@example.test';
const LONE = 'x\uD800y';
/** How a URL comes closest to a lone surrogate: U+D800 encoded as if UTF-8 allowed it (it does not). */
const LONE_IN_URL = 'x%ED%A0%80y';
/** Header bytes of that encoding, which Node reads as Latin-1. */
const LONE_IN_HEADER = 'x\xED\xA0\x80y';

type Path = Array<string | number>;
type Schema = Record<string, any>;
interface Operation {
  method: string;
  route: string;
  op: Schema;
}

/** Every place a string may sit in a JSON schema; a free-form object's key is a path ending in a key made of LONE. */
function stringFields(schema: Schema | undefined, path: Path = []): Array<{ path: Path; isKey: boolean }> {
  if (!schema || typeof schema !== 'object') return [];
  const found: Array<{ path: Path; isKey: boolean }> = [];
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('string')) found.push({ path, isKey: false });
  for (const [name, inner] of Object.entries<Schema>(schema.properties ?? {})) found.push(...stringFields(inner, [...path, name]));
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    found.push({ path: [...path, `key-${LONE}`], isKey: true });
    found.push(...stringFields(schema.additionalProperties, [...path, 'key']));
  }
  if (schema.items) found.push(...stringFields(schema.items, [...path, 0]));
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) found.push(...stringFields(branch, path));
  const seen = new Set<string>();
  return found.filter((f) => !seen.has(JSON.stringify(f.path)) && seen.add(JSON.stringify(f.path)));
}

/** A body holding `value` at `path`, nothing else (the refusal comes before validation). */
function bodyWith(path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (typeof head === 'number') return [bodyWith(rest, value)];
  return { [head!]: bodyWith(rest, value) };
}

t.test('unstorable text is refused naming the field', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const listed = await api(app, 'POST', '/api/v1/developers/agents', { token: admin.accessToken, body: { name: 'Signer', venue: 'SPOT_VENUE' } });
  t.equal(listed.status, 201);
  const agent = { id: listed.body.data.id as string, secret: listed.body.data.inboundWebhookSigningSecretReveal as string };
  const signedHeaders = (body: unknown) => {
    const signature = signWebhookBody({ secret: agent.secret, body, timestampMs: Date.now() });
    return { 'x-svc-timestamp': signature.timestampHeader, 'x-svc-signature': signature.signatureHeader };
  };

  await t.test('over every field of the OpenAPI document', async (t) => {
    await everyDocumentedField(t, app, admin.accessToken, agent.id, signedHeaders);
  });

  await t.test("in the signal webhook's body, free-form in the document: a signed text or signalId", async (t) => {
    for (const body of [{ text: LONE }, { signalId: LONE, text: 'gm' }]) {
      const res = await api(app, 'POST', `/api/v1/signals/${agent.id}`, { body, headers: signedHeaders(body) });
      t.equal(res.status, 400, JSON.stringify(res.body));
      t.match(res.body.error, { reason: 'MALFORMED_REQUEST', field: Object.keys(body)[0], in: 'body' });
    }
    const inbox = await api(app, 'GET', `/api/v1/developers/agents/${agent.id}/signals`, { token: admin.accessToken });
    t.same(inbox.body.data.items, [], 'nothing reached the inbox');
  });

  await t.test('in a client registration, whose body the OAuth provider reads itself: invalid_client_metadata naming the field', async (t) => {
    for (const client_name of [LONE, 'x\u0000y']) {
      const res = await api(app, 'POST', '/oauth/register', { body: { redirect_uris: ['https://client.example/cb'], client_name, token_endpoint_auth_method: 'none' } });
      t.equal(res.status, 400, JSON.stringify(res.body));
      t.equal(res.body.error, 'invalid_client_metadata');
      t.match(res.body.error_description, /^client_name: text must not contain/);
    }
  });

  await t.test('in a header: Node reads its bytes as Latin-1, so no surrogate arises; the session records them as sent', async (t) => {
    const user = await signIn(app, 'latin1-agent@example.test', { userAgent: LONE_IN_HEADER });
    const sessions = await api(app, 'GET', '/api/v1/users/me/sessions', { token: user.accessToken });
    t.equal(sessions.status, 200);
    t.same(sessions.body.data.map((s: { userAgent: string }) => s.userAgent), [LONE_IN_HEADER], 'the user agent, a byte a character');
  });
});

/** The walk: each field and parameter of each operation, one request each. */
async function everyDocumentedField(t: Test, app: TestApp, token: string, agentId: string, signedHeaders: (body: unknown) => Record<string, string>) {

  const doc = (await api(app, 'GET', '/docs/json')).body;
  const operations: Operation[] = Object.entries<Schema>(doc.paths).flatMap(([route, item]) =>
    Object.entries<Schema>(item).map(([method, op]) => ({ method: method.toUpperCase(), route, op })),
  );
  const paramsOf = (op: Schema, where: string): Schema[] => (op.parameters ?? []).filter((p: Schema) => p.in === where);
  const signed = (op: Schema) => paramsOf(op, 'header').some((p) => p.name === 'x-svc-signature');

  /** The operation's URL with each path parameter filled (`value` for the one named), and its query. */
  const urlOf = ({ route, op }: Operation, named?: { name: string; value: string }, query = '') =>
    route.replace(/\{(\w+)\}/g, (_, name: string) => (name === named?.name ? named.value : signed(op) ? agentId : 'x')) + query;

  const send = (operation: Operation, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const auth: Record<string, string> = operation.op.security?.length ? { authorization: `Bearer ${token}` } : {};
    const webhook = signed(operation.op) && body !== undefined ? signedHeaders(body) : {};
    return api(app, operation.method, url, { ...(body === undefined ? {} : { body }), headers: { ...auth, ...webhook, ...headers } });
  };

  const expectRefusal = (t: Test, res: { status: number; body: any }, field: string, where: string, what: string) =>
    t.same(
      { status: res.status, reason: res.body?.error?.reason, field: res.body?.error?.field, in: res.body?.error?.in },
      { status: 400, reason: 'MALFORMED_REQUEST', field, in: where },
      `${what}: ${JSON.stringify(res.body?.error?.message ?? res.body)}`,
    );

  const checked = new Set<string>();
  for (const operation of operations) {
    const { method, route, op } = operation;
    const bodySchema = op.requestBody?.content?.['application/json']?.schema;
    const fields = stringFields(bodySchema);
    const query = paramsOf(op, 'query');
    const path = paramsOf(op, 'path');
    const headers = paramsOf(op, 'header');
    if (fields.length + query.length + path.length + headers.length === 0) continue;
    await t.test(`${method} ${route}`, async (t) => {
      for (const { path: at, isKey } of fields) {
        const res = await send(operation, urlOf(operation), bodyWith(at, isKey ? 1 : LONE));
        const field = at.length ? at.join('.') : 'body';
        expectRefusal(t, res, field, 'body', `body field ${field}`);
        checked.add(`${method} ${route} body ${field}`);
      }
      for (const { name } of query) {
        const res = await send(operation, urlOf(operation, undefined, `?${encodeURIComponent(name)}=${LONE_IN_URL}`));
        expectRefusal(t, res, name, 'query', `query parameter ${name}`);
        checked.add(`${method} ${route} query ${name}`);
      }
      for (const { name } of path) {
        const res = await send(operation, urlOf(operation, { name, value: LONE_IN_URL }));
        expectRefusal(t, res, name, 'path', `path parameter ${name}`);
        checked.add(`${method} ${route} path ${name}`);
      }
      for (const { name } of headers) {
        const res = await send(operation, urlOf(operation), undefined, { [name]: LONE_IN_HEADER });
        t.ok(res.status > 0 && res.status < 500, `header ${name}: ${res.status} ${JSON.stringify(res.body?.error)}`);
        checked.add(`${method} ${route} header ${name}`);
      }
    });
  }
  // The walk reached the fields an attack found answering 500 (a sample: the walk itself covers every field).
  for (const field of [
    'POST /api/v1/developers/agents body description',
    'POST /api/v1/developers/agents body name',
    'POST /api/v1/developers/agents body signalExecutionDefaults.stopLossMode',
    'POST /api/v1/developers/agents body connectedChannels.0.channelName',
    'PUT /api/admin/market/prices body prices.key-x\uD800y',
    'POST /api/api-keys body name',
    'POST /api/auth/lookup body promoCode',
    'GET /api/auth/username-exists query username',
    'GET /api/v1/agents/{id} path id',
  ]) {
    t.ok(checked.has(field), field);
  }
  t.comment(`${checked.size} fields and parameters checked over ${operations.length} operations`);
}
