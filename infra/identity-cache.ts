import type { Redis } from 'ioredis';
import { confirmedSubscription, prefixedChannel, type ConfirmedSubscription } from './redis.ts';

/**
 * What a signed-in request costs in identity checks: a per-process memory of who a credential names
 * (a JWT's (user, session), an API key's hash), so a request needs no query while its credential is
 * known live. An entry belongs to groups (its user; an API key's stream too), and is dropped when the
 * read models change anything of one of them (a session ended by sign-out, an administrator's revoke
 * or a reused refresh token; a role or tier changed; a key revoked): in the process that applied the
 * change at once, in every other process by Redis pub/sub. An entry lives at most `ttlMs` either way,
 * the bound on how stale it can be if a notice is lost (docs/decisions.md, "The floor of a signed-in
 * request" and "API keys remembered per process").
 */
export interface IdentityCache<T> {
  /** The identity of (user, session), from memory or `load` (null: none; never remembered); dropped with the user. */
  get(userId: string, sessionId: string, load: () => Promise<T | null>): Promise<T | null>;
  /**
   * The value of `key`, from memory or `load` (null: none; never remembered); dropped when one of `groupsOf(value)` changes.
   * A key starts with its kind (`apikey:`, `user:`), so one kind's values are never answered for another's.
   * `usable`: whether a remembered value may answer this call (one that may not is loaded again, and the new one remembered).
   * `weight`: what the value counts against the memory's bound (1 when not given: an identity; a rendered text its KiB).
   */
  lookup<V>(
    key: string,
    load: () => Promise<V | null>,
    groupsOf: (value: V) => readonly string[],
    usable?: (value: V) => boolean,
    weight?: (value: V) => number,
  ): Promise<V | null>;
  /** These groups' entries are gone here at once, and in every process once the notice reaches it. */
  changed(groups: Iterable<string>): void;
  /** What the memory holds now: its entries and their total weight. */
  held(): { entries: number; weight: number };
  close(): void;
}

/** The pub/sub channel (under the Redis key prefix: two deployments or test runs sharing a Redis never hear each other). */
const CHANNEL = 'identity-changed';
/** The channel a client's notices go out on. */
export const noticeChannel = (redis: Redis): string => prefixedChannel(redis, CHANNEL);

/** Beyond this many groups' changes kept, their numbers are trimmed (memory stays bounded whatever the callers). */
const MAX_CHANGES_KEPT = 100_000;
/**
 * Beyond this total weight the entries remembered first go: 100,000 identities, or about 100 MiB of rendered
 * text (a text weighs its KiB), or a mix.
 */
export const MAX_WEIGHT = 100_000;

interface Entry {
  value: unknown;
  until: number;
  groups: readonly string[];
  weight: number;
}

export function createIdentityCache<T>(options: {
  /** the runtime's client: publishes go through it; the subscriber is a connection of its own */
  redis: Redis;
  /** how long an entry is used: the staleness bound; 0 keeps nothing (every request queries) */
  ttlMs: number;
  onerror: (error: Error) => void;
}): IdentityCache<T> {
  const { redis, ttlMs, onerror } = options;
  const channel = noticeChannel(redis);
  /** what was loaded and until when it is used, in the order remembered; and each group's entries */
  const entries = new Map<string, Entry>();
  const members = new Map<string, Set<string>>();
  let weighed = 0;
  /** live once Redis confirmed the subscription: before that a notice could be missed, so nothing is remembered */
  let notices: ConfirmedSubscription | undefined;
  const subscribed = () => notices?.live() === true;
  /**
   * A load that began before a change of one of its groups is not remembered (it may have read the
   * old rows). Every change takes the next number; each group keeps the number of its last change,
   * and `floor` the number below which no load is remembered (everything dropped, or the groups'
   * numbers trimmed), so one user's change does not stop every other user's load from being remembered.
   */
  let seq = 0;
  let floor = 0;
  const lastChange = new Map<string, number>();
  const drop = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    weighed -= entry.weight;
    for (const group of entry.groups) {
      const keys = members.get(group);
      keys?.delete(key);
      if (keys?.size === 0) members.delete(group);
    }
  };
  const forget = (groups: Iterable<string>) => {
    seq++;
    for (const group of groups) {
      for (const key of members.get(group) ?? []) drop(key);
      lastChange.set(group, seq);
    }
    if (lastChange.size > MAX_CHANGES_KEPT) {
      lastChange.clear();
      floor = seq;
    }
  };
  const forgetAll = () => {
    floor = ++seq;
    lastChange.clear();
    entries.clear();
    members.clear();
    weighed = 0;
  };
  const remember = (key: string, value: unknown, groups: readonly string[], weight: number, since: number, now: number) => {
    if (!subscribed() || since < floor || groups.some((g) => (lastChange.get(g) ?? 0) > since)) return;
    drop(key);
    // Entries are kept in the order remembered, all for the same TTL: those whose time is up are the first ones.
    for (const [first, entry] of entries) {
      if (entry.until > now) break;
      drop(first);
    }
    entries.set(key, { value, until: now + ttlMs, groups, weight });
    weighed += weight;
    for (const group of groups) {
      let keys = members.get(group);
      if (!keys) members.set(group, (keys = new Set()));
      keys.add(key);
    }
    while (weighed > MAX_WEIGHT && entries.size > 1) drop(entries.keys().next().value!);
  };
  const lookup = async <V>(
    key: string,
    load: () => Promise<V | null>,
    groupsOf: (value: V) => readonly string[],
    usable?: (value: V) => boolean,
    weight?: (value: V) => number,
  ): Promise<V | null> => {
    if (ttlMs <= 0 || !subscribed()) return load();
    const now = performance.now();
    const hit = entries.get(key);
    if (hit && hit.until > now && (!usable || usable(hit.value as V))) return hit.value as V;
    const since = seq;
    const value = await load();
    if (value === null) {
      drop(key);
      return null;
    }
    remember(key, value, groupsOf(value), weight ? Math.max(1, weight(value)) : 1, since, now);
    return value;
  };

  if (ttlMs > 0) {
    // Notices sent while the connection was down are lost: whatever was remembered then is dropped.
    notices = confirmedSubscription(
      redis,
      channel,
      {
        message(raw) {
          try {
            forget(JSON.parse(raw) as string[]);
          } catch {
            forgetAll();
          }
        },
        connected: forgetAll,
        confirmed: forgetAll,
        lost: forgetAll,
      },
      onerror,
    );
  }

  return {
    get: (userId, sessionId, load) => lookup(`${userId}\u0000${sessionId}`, load, () => [userId]),
    lookup,
    changed(groups) {
      const ids = [...new Set(groups)];
      if (ids.length === 0) return;
      forget(ids);
      redis.publish(channel, JSON.stringify(ids)).catch(onerror);
    },
    held: () => ({ entries: entries.size, weight: weighed }),
    close() {
      notices?.close();
      forgetAll();
    },
  };
}
