import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isAdminScope, scopesOfRole } from '../../domain/access/scopes.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { hashApiKey, keyEncryptionKeyOf, openSigningSecret, requestSignature, signatureMatches } from '../../infra/api-keys.ts';
import { apiKeyStream } from '../../domain/apikey/decide.ts';
import { findActiveKey, type KeyCaller } from '../../projections/apikeys/queries.ts';
import '../types.ts';

/** How far x-timestamp may be from the server's clock, either way. */
const MAX_DRIFT_MS = 5 * 60_000;
const TIMESTAMP = /^\d{1,16}$/;

/**
 * An active key as remembered per process: its caller, its scopes already cut to what the owner's
 * role holds (a role change drops the entry), and its signing secret opened once (never logged nor answered).
 */
type ActiveKey = Omit<KeyCaller, 'sealedSecret'> & { signingSecret: string };

/**
 * API key mode (`mode: apiKey`): `x-api-key` names an active key (not revoked, not expired); the
 * caller holds the key's scopes within its owner's current role. Every request must carry
 * `x-timestamp` (epoch ms, at most 5 minutes off) and `x-signature` (lowercase hex HMAC-SHA256 with
 * the key's secret over timestamp + METHOD + path with its query as sent + the raw body), checked
 * once the body is read, in constant time, and never accepted twice within the window (Redis).
 * Admin routes take an unsigned request unless ADMIN_REQUIRE_SIGNATURE is on (the spec's point 5).
 * Public routes need no signature (the spec's point 4): there a key counts only when the request
 * is signed (then checked as anywhere), and an unsigned request, or one with a key that is unknown,
 * revoked or expired, is answered as anonymous.
 * An active key is remembered per process (infra/identity-cache.ts, by its keyed hash, as JWT
 * sessions are): dropped when its stream or its owner's changes (a revocation, a role or tier), here
 * at once and elsewhere by the notice, used IDENTITY_CACHE_TTL_MS at most, and its expiry checked on
 * every use (docs/decisions.md, "API keys remembered per process").
 */
async function apiKeyPlugin(app: FastifyInstance): Promise<void> {
  const { config, pool, clock, redis, identities } = app.deps;
  const kek = keyEncryptionKeyOf(config);
  const loadKey = async (keyHash: string): Promise<ActiveKey | null> => {
    const found = await findActiveKey(pool, keyHash, clock.now());
    if (!found) return null;
    const { sealedSecret, ...caller } = found;
    const held = new Set(scopesOfRole(caller.role));
    return { ...caller, scopes: caller.scopes.filter((s) => held.has(s)), signingSecret: openSigningSecret(sealedSecret, kek) };
  };
  const activeKey = async (given: string): Promise<ActiveKey | null> => {
    const keyHash = hashApiKey(given, kek);
    const key = await identities.lookup(
      `apikey:${keyHash}`,
      () => loadKey(keyHash),
      (k) => [k.ownerId, apiKeyStream(k.keyId)],
    );
    return key && (key.expiresAt === null || key.expiresAt > clock.now().getTime()) ? key : null;
  };
  app.decorateRequest('apiKeySecret', null);

  app.addHook('onRequest', async (request) => {
    const given = request.headers['x-api-key'];
    if (given === undefined || request.identity) return;
    const open = isPublicRoute(request);
    // Unproven, a key must not spend its budget or stand for its owner: the request is anonymous.
    if (open && request.headers['x-signature'] === undefined && request.headers['x-timestamp'] === undefined) return;
    const key = typeof given === 'string' ? await activeKey(given) : null;
    if (!key && open) return;
    if (!key) throw refuse('AUTHENTICATION_REQUIRED', 'the API key is unknown, revoked or expired');
    request.identity = {
      userId: key.ownerId,
      email: key.email,
      role: key.role,
      mode: 'apiKey',
      scopes: key.scopes,
      tier: key.tier,
      keyId: key.keyId,
    };
    request.apiKeySecret = key.signingSecret;
  });

  app.addHook('preValidation', async (request) => {
    const secret = request.apiKeySecret;
    if (!secret) return;
    const signature = header(request, 'x-signature');
    const timestamp = header(request, 'x-timestamp');
    const scope = request.routeOptions.config?.access?.scope;
    const adminRoute = scope !== undefined && scope !== null && isAdminScope(scope);
    if (signature === undefined && timestamp === undefined && adminRoute && !config.ADMIN_REQUIRE_SIGNATURE) return;
    if (signature === undefined) throw refuse('INVALID_SIGNATURE', 'x-signature is required with an API key');
    if (timestamp === undefined || !TIMESTAMP.test(timestamp))
      throw refuse('INVALID_SIGNATURE', 'x-timestamp (epoch milliseconds) is required with x-signature');
    if (Math.abs(clock.now().getTime() - Number(timestamp)) > MAX_DRIFT_MS)
      throw refuse('INVALID_SIGNATURE', 'x-timestamp is more than 5 minutes from the server clock');
    // The signature covers the raw bytes, which only the JSON parser keeps: any other body (text/plain) could not be proven.
    if (request.body !== undefined && request.rawBody === undefined) throw refuse('INVALID_SIGNATURE', 'a signed request carries a JSON body or none');
    const expected = requestSignature(secret, { timestamp, method: request.method, path: request.url, body: request.rawBody ?? '' });
    if (!signatureMatches(signature, expected)) throw refuse('INVALID_SIGNATURE', 'x-signature does not match the request');
    // A signature is good for one request: a copy replayed within the drift window is refused.
    const fresh = await redis.set(`apisig:${request.identity!.keyId}:${signature}`, '1', 'PX', 2 * MAX_DRIFT_MS, 'NX');
    if (fresh !== 'OK') throw refuse('INVALID_SIGNATURE', 'this signature was used already');
  });
}

/**
 * A route that needs no caller: it declares no `access` (api/plugins/access.ts) and is no OAuth
 * protected resource of its own (`oauthResource`: the MCP endpoint, which requires a caller).
 */
function isPublicRoute(request: FastifyRequest): boolean {
  const config = request.routeOptions.config;
  return config?.access === undefined && config?.oauthResource === undefined;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

export default fp(apiKeyPlugin, { name: 'api-key', dependencies: ['auth'] });
