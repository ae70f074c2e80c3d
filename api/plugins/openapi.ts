import type { FastifyInstance, RouteOptions } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { isAdminScope } from '../../domain/access/scopes.ts';
import { errorCatalogue, type ErrorReason } from '../../domain/shared/errors.ts';
import { codeOf, statusOf } from './error-status.ts';
import { commandRefusals, EVERY_COMMAND } from '../routes/refusals.ts';
import type { AuthMode } from '../types.ts';
import '../types.ts';

// The OpenAPI document's operations say what a generated client needs: each status the operation
// can answer, with the error envelope whose `reason` (and `code`) is an enum of exactly the reasons
// it can give at that status; the security it takes (public routes: none); and its request
// headers. All of it is derived from what the route declares (access, input schemas, the commands
// it dispatches, its hooks), so a route's change shows in the document without an edit here.

type TransformInput = Parameters<typeof jsonSchemaTransform>[0];
type JsonSchema = Record<string, unknown>;

const ALL_MODES: readonly AuthMode[] = ['jwt', 'apiKey', 'oauth'];

/**
 * What any request can be refused with, whatever its route: an unexpected error, a dependency
 * down, text that cannot be stored in its URL (api/plugins/unstorable-text.ts), an API key sent
 * with it (checked on every route, api/plugins/api-key.ts), and the HTTP parser's own refusals.
 */
const EVERY_ROUTE: readonly ErrorReason[] = [
  'MALFORMED_REQUEST',
  'AUTHENTICATION_REQUIRED',
  'INVALID_SIGNATURE',
  'REQUEST_TIMEOUT',
  'URI_TOO_LONG',
  'HEADERS_TOO_LARGE',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
];
/** A route with a body: a body not JSON, too large or too many members. */
const WITH_BODY: readonly ErrorReason[] = ['VALIDATION_FAILED', 'BODY_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];
/** A route honouring Idempotency-Key (api/plugins/idempotency.ts). */
const IDEMPOTENT: readonly ErrorReason[] = ['VALIDATION_FAILED', 'IDEMPOTENCY_KEY_REUSED', 'TRADE_IN_PROGRESS'];
const IDEMPOTENCY_HEADER = 'idempotency-key';

const hooksOf = <H>(hooks: H | H[] | undefined): H[] => (hooks ? (Array.isArray(hooks) ? hooks : [hooks]) : []);

/** The refusals of a route's access (api/plugins/access.ts): no caller, no scope, not an administrator. */
function accessRefusals(route: RouteOptions): ErrorReason[] {
  const access = route.config?.access;
  if (!access) return [];
  const modes = access.modes ?? ALL_MODES;
  const reasons: ErrorReason[] = ['AUTHENTICATION_REQUIRED'];
  if (access.scope && modes.some((m) => m !== 'jwt')) reasons.push('INSUFFICIENT_SCOPE');
  if (access.scope && isAdminScope(access.scope)) reasons.push('ADMIN_REQUIRED');
  return reasons;
}

/** Every reason a route can answer with (the catalogue's order). */
export function refusalsOf(app: FastifyInstance, route: RouteOptions): ErrorReason[] {
  const { schema, config } = route;
  const reasons = new Set<ErrorReason>(EVERY_ROUTE);
  const add = (more: readonly ErrorReason[]) => {
    for (const r of more) reasons.add(r);
  };
  if (schema?.body) add(WITH_BODY);
  if (schema?.querystring || schema?.params || schema?.headers) add(['VALIDATION_FAILED']);
  add(accessRefusals(route));
  if (app.deps.config.RATE_LIMIT_ENABLED) add(['RATE_LIMITED']);
  if (app.hasDecorator('idempotent') && hooksOf(route.preHandler).includes(app.idempotent)) add(IDEMPOTENT);
  for (const command of config?.dispatches ?? []) add([...EVERY_COMMAND, ...commandRefusals[command]]);
  add(config?.refusals ?? []);
  return (Object.keys(errorCatalogue) as ErrorReason[]).filter((r) => reasons.has(r));
}

/** The error envelope of one status, its `reason` and `code` narrowed to what the operation gives there. */
function errorResponse(reasons: readonly ErrorReason[]): JsonSchema {
  return {
    description: reasons.map((r) => `\`${r}\`: ${errorCatalogue[r].description}`).join('\n\n'),
    type: 'object',
    required: ['success', 'error'],
    properties: {
      success: { type: 'boolean', enum: [false] },
      error: {
        type: 'object',
        description: 'More fields a client may act on come with some reasons (their descriptions name them)',
        required: ['code', 'reason', 'message'],
        properties: {
          code: { type: 'string', enum: [...new Set(reasons.map(codeOf))] },
          reason: { type: 'string', enum: [...reasons] },
          message: { type: 'string' },
        },
        additionalProperties: true,
      },
    },
  };
}

/** The error responses of a route, one per status. */
export function errorResponses(reasons: readonly ErrorReason[]): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorReason[]>();
  for (const reason of reasons) {
    const status = statusOf(reason);
    byStatus.set(status, [...(byStatus.get(status) ?? []), reason]);
  }
  return Object.fromEntries([...byStatus].sort(([a], [b]) => a - b).map(([status, list]) => [String(status), errorResponse(list)]));
}

/** The Idempotency-Key header added to the route's headers, unless its schema names it already. */
function withIdempotencyHeader(headers: JsonSchema | undefined): JsonSchema {
  const properties = (headers?.properties ?? {}) as Record<string, unknown>;
  if (Object.keys(properties).some((name) => name.toLowerCase() === IDEMPOTENCY_HEADER)) return headers!;
  const key = {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    description: '1 to 255 visible ASCII characters; a repeat within 24 hours answers the first response',
  };
  return { type: 'object', ...headers, properties: { ...properties, 'Idempotency-Key': key } };
}

/**
 * OpenAPI 3.0's `nullable` applies only beside a `type`: zod writes it beside `oneOf`/`anyOf` too,
 * where it would not admit null. Such a schema becomes a union with the null schema instead.
 */
function admitNullAsUnion(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(admitNullAsUnion);
  if (!node || typeof node !== 'object') return;
  const schema = node as JsonSchema;
  Object.values(schema).forEach(admitNullAsUnion);
  if (schema.nullable !== true || 'type' in schema) return;
  const { nullable: _nullable, ...rest } = schema;
  for (const key of Object.keys(schema)) delete schema[key];
  schema.anyOf = [rest, { type: 'object', nullable: true, enum: [null] }];
}

const camel = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** A stable operationId from the method and the path (`:agentId` as `ByAgentId`), for SDK generators' method names. */
export function operationIdOf(method: string, url: string): string {
  const words = url
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => (segment.startsWith(':') ? ['by', segment.slice(1)] : segment.split(/[^A-Za-z0-9]+/)))
    .filter(Boolean);
  return method.toLowerCase() + words.map(camel).join('');
}

/**
 * The swagger transform: the zod schemas as JSON Schema (fastify-type-provider-zod), then the
 * route's error responses, its security (none on a public route), its Idempotency-Key header and
 * its operationId.
 */
export function openapiTransform(app: FastifyInstance) {
  return (input: TransformInput) => {
    const transformed = jsonSchemaTransform(input);
    const route = (input as TransformInput & { route: RouteOptions }).route;
    const schema = transformed.schema as JsonSchema;
    if (schema.hide) return transformed;
    admitNullAsUnion(schema);
    if (!schema.security) schema.security = [];
    // a route of several methods is one operation per method, which one id cannot name
    if (!schema.operationId && typeof route.method === 'string') schema.operationId = operationIdOf(route.method, transformed.url);
    // A route that declares no answer (the OAuth protocol's, the health probe) answers formats of
    // its own, not the envelope: it stays as its route describes it.
    if (!schema.response) return transformed;
    const reasons = refusalsOf(app, route);
    schema.response = { ...(schema.response as JsonSchema), ...errorResponses(reasons) };
    if (reasons.includes('IDEMPOTENCY_KEY_REUSED')) schema.headers = withIdempotencyHeader(schema.headers as JsonSchema | undefined);
    return transformed;
  };
}
