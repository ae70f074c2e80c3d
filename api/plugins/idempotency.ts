import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson } from '../../domain/shared/canonical-json.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { createIdempotencyKeys } from '../../infra/idempotency.ts';
import '../types.ts';

/** The IETF draft's header; a key is 1 to 255 visible ASCII characters (a structured-field string's quotes are taken off). */
const HEADER = 'idempotency-key';
const KEY = /^[\x21-\x7e]{1,255}$/;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The key as sent, without the quotes of a structured-field string (`"abc"` and `abc` are one key). */
function keyOf(request: FastifyRequest): string | null {
  const raw = request.headers[HEADER];
  if (raw === undefined) return null;
  const value = (Array.isArray(raw) ? raw.join(',') : raw).trim();
  const key = value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  if (!KEY.test(key)) throw refuse('VALIDATION_FAILED', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  return key;
}

/**
 * Answers worth keeping for a key: what ran (2xx) or was tried and failed at the venue (422). A
 * refusal before anything ran (frozen, busy, too large, …) frees the key: a retry decides afresh.
 */
const kept = (status: number) => (status >= 200 && status < 300) || status === 422;

/**
 * `app.idempotent` (a preHandler for routes that move money): a request with an `Idempotency-Key`
 * claims it for the caller; a repeat with the same method, path and body answers the first status
 * and envelope (header `Idempotent-Replayed: true`), a different one 422, one whose first request
 * is still running 409 TRADE_IN_PROGRESS. `request.idempotencyKey` is the key's hash for the
 * handler to derive stable ids from. Runs after authentication (keys are per user).
 */
async function idempotencyPlugin(app: FastifyInstance): Promise<void> {
  const { config, pool, clock } = app.deps;
  const keys = createIdempotencyKeys(pool, { ttlMs: config.IDEMPOTENCY_TTL_MS, leaseMs: config.IDEMPOTENCY_LEASE_MS });
  app.decorateRequest('idempotencyKey', null);

  app.decorate('idempotent', async function idempotent(request: FastifyRequest, reply: FastifyReply) {
    const key = keyOf(request);
    if (key === null) return;
    const userId = request.identity!.userId;
    const keyHash = sha256(key);
    const fingerprint = sha256(`${request.method} ${request.url}\n${canonicalJson(request.body ?? null)}`);
    const claim = await keys.claim(userId, keyHash, fingerprint, clock.now());
    switch (claim.kind) {
      case 'run':
        request.idempotencyKey = keyHash;
        return;
      case 'replay':
        return reply.code(claim.status).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(claim.body);
      case 'in-flight':
        throw refuse('TRADE_IN_PROGRESS', 'the first request with this Idempotency-Key is still running: retry once it answered');
      case 'mismatch':
        throw refuse('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another request (method, path or body): use a new key');
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const keyHash = request.idempotencyKey;
    if (!keyHash) return payload; // null, or undefined on routes registered before this plugin (docs)
    request.idempotencyKey = null;
    const userId = request.identity!.userId;
    if (kept(reply.statusCode) && typeof payload === 'string') await keys.complete(userId, keyHash, reply.statusCode, payload);
    else await keys.release(userId, keyHash);
    return payload;
  });
}

export default fp(idempotencyPlugin, { name: 'idempotency', dependencies: ['auth'] });

/**
 * A money move's own id from the request's Idempotency-Key (its hash, per user), so a repeat runs
 * the same transfer; undefined without a key (the move takes a fresh id).
 */
export function keyedMoveId(request: FastifyRequest): string | undefined {
  if (!request.idempotencyKey) return undefined;
  return createHash('sha256').update(`${request.identity!.userId}:${request.idempotencyKey}`).digest('hex').slice(0, 32);
}
