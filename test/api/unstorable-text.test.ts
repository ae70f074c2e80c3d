import t from 'tap';
import { signWebhookText } from '../../infra/signing/webhook.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

// The rule "text PostgreSQL cannot store is a 400 naming the field, before the route runs", over
// every operation of the OpenAPI document: every string of each request body (values, and the
// keys of free-form objects), every query and path parameter; a header parameter never 5xx.

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

/** One request for one field or parameter, and the refusal it must meet (null: any answer but a 5xx). */
interface Probe {
  what: string;
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  refusal: { field: string; in: string } | null;
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

const parametersOf = (op: Schema, where: string): Schema[] => (op.parameters ?? []).filter((p: Schema) => p.in === where);
/** The signal webhook: its path names the agent whose secret signs the body. */
const isSigned = (op: Schema) => parametersOf(op, 'header').some((p) => p.name === 'x-svc-signature');

/** The probes of one operation: each body string, query, path and header parameter in turn. */
function probesOf({ route, op }: Operation, agentId: string): Probe[] {
  const urlOf = (named?: { name: string; value: string }, query = '') =>
    route.replace(/\{(\w+)\}/g, (_, name: string) => (name === named?.name ? named.value : isSigned(op) ? agentId : 'x')) + query;
  const body = stringFields(op.requestBody?.content?.['application/json']?.schema).map(({ path, isKey }): Probe => {
    const field = path.length ? path.join('.') : 'body';
    return { what: `body ${field}`, url: urlOf(), body: bodyWith(path, isKey ? 1 : LONE), refusal: { field, in: 'body' } };
  });
  const query = parametersOf(op, 'query').map(
    ({ name }): Probe => ({
      what: `query ${name}`,
      url: urlOf(undefined, `?${encodeURIComponent(name)}=${LONE_IN_URL}`),
      refusal: { field: name, in: 'query' },
    }),
  );
  const path = parametersOf(op, 'path').map(
    ({ name }): Probe => ({ what: `path ${name}`, url: urlOf({ name, value: LONE_IN_URL }), refusal: { field: name, in: 'path' } }),
  );
  const headers = parametersOf(op, 'header').map(
    ({ name }): Probe => ({ what: `header ${name}`, url: urlOf(), headers: { [name]: LONE_IN_HEADER }, refusal: null }),
  );
  return [...body, ...query, ...path, ...headers];
}

t.test('unstorable text is refused naming the field', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const listed = await api(app, 'POST', '/api/v1/developers/agents', { token: admin.accessToken, body: { name: 'Signer', venue: 'SPOT_VENUE' } });
  t.equal(listed.status, 201);
  const agent = { id: listed.body.data.id as string, secret: listed.body.data.inboundWebhookSigningSecretReveal as string };
  // Signed over the bytes sent (JSON.stringify escapes a lone surrogate): a body with one has no canonical JSON.
  const signedHeaders = (body: unknown): Record<string, string> => {
    const signature = signWebhookText({ secret: agent.secret, text: JSON.stringify(body), timestampMs: Date.now() });
    return { 'x-svc-timestamp': signature.timestampHeader, 'x-svc-signature': signature.signatureHeader };
  };
  /** The probe's request, as the administrator (who may call every route) and signed for the webhook. */
  const send = ({ method, op }: Operation, probe: Probe) => {
    const auth: Record<string, string> = op.security?.length ? { authorization: `Bearer ${admin.accessToken}` } : {};
    const webhook = isSigned(op) && probe.body !== undefined ? signedHeaders(probe.body) : {};
    return api(app, method, probe.url, { ...(probe.body === undefined ? {} : { body: probe.body }), headers: { ...auth, ...webhook, ...probe.headers } });
  };

  await t.test('over every field of the OpenAPI document', async (t) => {
    const { paths } = (await api(app, 'GET', '/docs/json')).body;
    const operations: Operation[] = Object.entries<Schema>(paths).flatMap(([route, item]) =>
      Object.entries<Schema>(item).map(([method, op]) => ({ method: method.toUpperCase(), route, op })),
    );
    const checked = new Set<string>();
    for (const operation of operations) {
      const probes = probesOf(operation, agent.id);
      if (probes.length === 0) continue;
      await t.test(`${operation.method} ${operation.route}`, async (t) => {
        for (const probe of probes) {
          const res = await send(operation, probe);
          const error = res.body?.error;
          const message = `${probe.what}: ${res.status} ${JSON.stringify(error?.message ?? res.body)}`;
          if (probe.refusal)
            t.same(
              { status: res.status, reason: error?.reason, field: error?.field, in: error?.in },
              { status: 400, reason: 'MALFORMED_REQUEST', ...probe.refusal },
              message,
            );
          else t.ok(res.status > 0 && res.status < 500, message);
          checked.add(`${operation.method} ${operation.route} ${probe.what}`);
        }
      });
    }
    // The walk reaches the fields an attack found answering 500 (a sample: the walk covers every field).
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
      'POST /api/v1/wallet/buy header idempotency-key',
    ]) {
      t.ok(checked.has(field), field);
    }
    t.comment(`${checked.size} fields and parameters checked over ${operations.length} operations`);
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
      const res = await api(app, 'POST', '/oauth/register', {
        body: { redirect_uris: ['https://client.example/cb'], client_name, token_endpoint_auth_method: 'none' },
      });
      t.equal(res.status, 400, JSON.stringify(res.body));
      t.equal(res.body.error, 'invalid_client_metadata');
      t.match(res.body.error_description, /^client_name: text must not contain/);
    }
  });

  await t.test('in a header: Node reads its bytes as Latin-1, so no surrogate arises; the session records them as sent', async (t) => {
    const user = await signIn(app, 'latin1-agent@example.test', { userAgent: LONE_IN_HEADER });
    const sessions = await api(app, 'GET', '/api/v1/users/me/sessions', { token: user.accessToken });
    t.equal(sessions.status, 200);
    t.same(
      sessions.body.data.map((s: { userAgent: string }) => s.userAgent),
      [LONE_IN_HEADER],
      'the user agent, a byte a character',
    );
  });
});
