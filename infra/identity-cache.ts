import type { Redis } from 'ioredis';

/**
 * What a signed-in request costs in identity checks: a per-process memory of (user, session) →
 * identity, so a JWT request needs no query while its session is known live. A user's entries are
 * dropped when the read models change anything of that user (a session ended by sign-out, an
 * administrator's revoke or a reused refresh token; a role or tier changed): in the process that
 * applied the change at once, in every other process by Redis pub/sub. An entry lives at most
 * `ttlMs` either way, the bound on how stale it can be if a notice is lost (docs/decisions.md,
 * "The floor of a signed-in request").
 */
export interface IdentityCache<T> {
  /** The identity of (user, session), from memory or `load` (null: none; never remembered). */
  get(userId: string, sessionId: string, load: () => Promise<T | null>): Promise<T | null>;
  /** These users' entries are gone here at once, and in every process once the notice reaches it. */
  changed(userIds: Iterable<string>): void;
  close(): void;
}

/** The pub/sub channel (under the Redis key prefix: two deployments or test runs sharing a Redis never hear each other). */
const CHANNEL = 'identity-changed';
/** Beyond this many users the one remembered first goes (memory stays bounded whatever the callers). */
const MAX_USERS = 50_000;

export function createIdentityCache<T>(options: {
  /** the runtime's client: publishes go through it; the subscriber is a connection of its own */
  redis: Redis;
  /** how long an entry is used: the staleness bound; 0 keeps nothing (every request queries) */
  ttlMs: number;
  onerror: (error: Error) => void;
}): IdentityCache<T> {
  const { redis, ttlMs, onerror } = options;
  const channel = `${redis.options.keyPrefix ?? ''}${CHANNEL}`;
  /** per user, per session: what was loaded and until when it is used (users in the order they were remembered) */
  const users = new Map<string, Map<string, { value: T; until: number }>>();
  /**
   * A load that began before a change of its user is not remembered (it may have read the old rows):
   * per user a count of changes, and an epoch bumped when everything is dropped (or the counts are
   * trimmed), so one user's change does not stop every other user's load from being remembered.
   */
  let epoch = 0;
  const changes = new Map<string, number>();
  const forget = (userIds: Iterable<string>) => {
    for (const userId of userIds) {
      users.delete(userId);
      changes.set(userId, (changes.get(userId) ?? 0) + 1);
    }
    if (changes.size > MAX_USERS) {
      changes.clear();
      epoch++;
    }
  };
  const forgetAll = () => {
    epoch++;
    changes.clear();
    users.clear();
  };

  let subscriber: Redis | undefined;
  /** true once Redis confirmed the subscription: before that a notice could be missed, so nothing is remembered */
  let subscribed = false;
  if (ttlMs > 0) {
    // subscribed again by hand on every (re)connection, so `subscribed` follows Redis's own confirmation
    subscriber = redis.duplicate({ keyPrefix: undefined, commandTimeout: undefined, autoResubscribe: false });
    const listener = subscriber;
    listener.on('error', onerror);
    listener.on('message', (_channel: string, raw: string) => {
      try {
        forget(JSON.parse(raw) as string[]);
      } catch {
        forgetAll();
      }
    });
    // Notices sent while the connection was down are lost: whatever was remembered then is dropped.
    listener.on('ready', () => {
      forgetAll();
      listener.subscribe(channel).then(() => {
        forgetAll();
        subscribed = true;
      }, onerror);
    });
    listener.on('close', () => {
      subscribed = false;
      forgetAll();
    });
  }

  return {
    async get(userId, sessionId, load) {
      if (ttlMs <= 0 || !subscribed) return load();
      const now = performance.now();
      const hit = users.get(userId)?.get(sessionId);
      if (hit && hit.until > now) return hit.value;
      const [atEpoch, atChange] = [epoch, changes.get(userId)];
      const value = await load();
      if (value === null) {
        users.get(userId)?.delete(sessionId);
        return null;
      }
      if (subscribed && atEpoch === epoch && atChange === changes.get(userId)) {
        let sessions = users.get(userId);
        if (!sessions) {
          users.set(userId, (sessions = new Map()));
          if (users.size > MAX_USERS) users.delete(users.keys().next().value!);
        }
        sessions.set(sessionId, { value, until: now + ttlMs });
      }
      return value;
    },
    changed(userIds) {
      const ids = [...new Set(userIds)];
      if (ids.length === 0) return;
      forget(ids);
      redis.publish(channel, JSON.stringify(ids)).catch(onerror);
    },
    close() {
      subscriber?.disconnect();
      forgetAll();
    },
  };
}
