// Client ID metadata documents: a client_id that is an https URL makes the authorization server
// fetch that URL, for anyone who sends an authorization request. So the fetch reaches public
// addresses only (infra/public-fetch.ts), is bounded in time and size, happens once per request,
// and a client address gets a few a minute.
import type { Redis } from 'ioredis';
import type { errors as ProviderErrors } from 'oidc-provider';
import { countInWindow } from '../../infra/redis.ts';
import { clientAddressDigest } from '../../infra/tokens.ts';
import { createPublicFetch } from '../../infra/public-fetch.ts';

/** oidc-provider aborts its own fetch after 2.5 s; the transport holds the same bound on its own. */
export const CLIENT_METADATA_TIMEOUT_MS = 2_500;
/** oidc-provider's limit for a client ID metadata document, applied by the transport to whatever it fetches. */
export const CLIENT_METADATA_MAX_BYTES = 5 * 1024;
/** Documents fetched a minute for one client address (documents already cached are not fetched). */
export const CLIENT_METADATA_FETCHES_PER_MIN = 10;

export const clientMetadataFetch = createPublicFetch({ timeoutMs: CLIENT_METADATA_TIMEOUT_MS, maxBytes: CLIENT_METADATA_MAX_BYTES });

/** The Redis key counting a client address's fetches (a keyed digest, never the address itself). */
export const clientMetadataFetchKey = (masterSecret: string, address: string) => `oauth:client-metadata-fetches:${clientAddressDigest(masterSecret, address)}`;

/** What allowFetch sees of the provider's request context. */
interface FetchContext {
  ip?: string;
}

/**
 * The provider's `clientIdMetadataDocument.allowFetch`. One fetch per request and document: when
 * the first failed, the provider's error handler looks the client up again, which would connect a
 * second time. Then one count per fetch in the client address's budget (a fixed minute window in
 * Redis, shared by every API process); a fetch that cannot be counted (Redis failed) is refused. A lookup outside
 * a provider request (the consent page naming its interaction's client) is neither: its client was
 * fetched and counted when the interaction began.
 */
function fetchPolicy(redis: Redis, masterSecret: string, tooMany: () => Error) {
  const tried = new WeakMap<object, Set<string>>();
  return async (ctx: FetchContext | undefined, clientId: string): Promise<boolean> => {
    if (!ctx) return true;
    const seen = tried.get(ctx) ?? new Set<string>();
    tried.set(ctx, seen);
    if (seen.has(clientId)) return false;
    seen.add(clientId);
    const key = clientMetadataFetchKey(masterSecret, ctx.ip ?? '');
    const count = await countInWindow(redis, key, 60_000).catch(() => null);
    if (count === null) return false;
    if (count > CLIENT_METADATA_FETCHES_PER_MIN) throw tooMany();
    return true;
  };
}

/** The provider's `features.clientIdMetadataDocument`: on, with the fetch policy above; beyond its budget an address gets 429 temporarily_unavailable. */
export function clientIdMetadataDocuments(redis: Redis, masterSecret: string, errors: typeof ProviderErrors) {
  const tooMany = () =>
    Object.assign(new errors.TemporarilyUnavailable('too many client ID metadata documents fetched for this address: try again in a minute'), {
      status: 429,
      statusCode: 429,
    });
  return { enabled: true, ack: 'draft-02', allowFetch: fetchPolicy(redis, masterSecret, tooMany) };
}
