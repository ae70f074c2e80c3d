import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { scopesOfRole } from '../../domain/access/scopes.ts';
import { findIdentity } from '../../projections/users/queries.ts';
import '../types.ts';

/** What an access token carries: the user and the session it was issued for. */
export interface AccessTokenPayload {
  sub: string;
  sid: string;
}

const BEARER = /^Bearer\s+(\S+)$/i;
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/;

/**
 * User JWT mode (`mode: jwt`, every scope of the role): a bearer token signed by us names a user and a session; the session must not be
 * ended (signed out, or by an administrator). A token that is not one of
 * ours leaves `request.identity` null, so later auth hooks (API keys, OAuth) can recognise it.
 */
async function authPlugin(app: FastifyInstance): Promise<void> {
  if (!app.hasRequestDecorator('identity')) app.decorateRequest('identity', null);

  app.addHook('onRequest', async (request) => {
    if (request.identity) return;
    const token = bearerToken(request);
    if (!token) return;
    let payload: AccessTokenPayload;
    try {
      payload = app.jwt.verify<AccessTokenPayload>(token);
    } catch {
      return;
    }
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') return;
    const { sub, sid } = payload;
    const found = await app.deps.identities.get(sub, sid, () => findIdentity(app.deps.pool, sub, sid));
    request.identity = found && { ...found, mode: 'jwt', scopes: scopesOfRole(found.role) };
  });
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? BEARER.exec(header) : null;
  return match && JWT_SHAPE.test(match[1]!) ? match[1] : undefined;
}

export default fp(authPlugin, { name: 'auth' });
