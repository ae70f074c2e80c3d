import { z } from 'zod';
import { scopeSchema, type Scope } from '../../domain/access/scopes.ts';
import type { Role } from '../../domain/user/events.ts';
import type { Pool } from '../../infra/db.ts';

/** An API key as lists show it: never its hash or secret. */
export const apiKeyItem = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  scopes: z.array(scopeSchema),
  /** the key's first characters, to tell keys apart */
  prefix: z.string(),
  expiresAt: z.string().nullable(),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
  status: z.enum(['active', 'expired', 'revoked']),
});
export type ApiKeyItem = z.infer<typeof apiKeyItem>;

interface KeyRow {
  key_id: string;
  name: string;
  type: string;
  scopes: Scope[];
  prefix: string;
  expires_at: Date | null;
  created_at: Date;
  revoked_at: Date | null;
}

const itemOf = (r: KeyRow, now: Date): ApiKeyItem => ({
  id: r.key_id,
  name: r.name,
  type: r.type,
  scopes: r.scopes,
  prefix: r.prefix,
  expiresAt: r.expires_at?.toISOString() ?? null,
  createdAt: r.created_at.toISOString(),
  revokedAt: r.revoked_at?.toISOString() ?? null,
  status: r.revoked_at ? 'revoked' : r.expires_at && r.expires_at <= now ? 'expired' : 'active',
});

/** The owner's keys, newest first. */
export async function listApiKeys(
  db: Pool,
  ownerId: string,
  page: { limit: number; page: number },
  now: Date,
): Promise<{ items: ApiKeyItem[]; total: number }> {
  const { rows } = await db.query<KeyRow & { total: string }>({
    name: 'list-api-keys',
    text: `SELECT key_id, name, type, scopes, prefix, expires_at, created_at, revoked_at, count(*) OVER () AS total
       FROM api_keys WHERE owner_id = $1 ORDER BY created_at DESC, key_id LIMIT $2 OFFSET $3`,
    values: [ownerId, page.limit, (page.page - 1) * page.limit],
  });
  let total = rows[0] ? Number(rows[0].total) : 0;
  if (rows.length === 0 && page.page > 1) {
    total = Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM api_keys WHERE owner_id = $1', [ownerId])).rows[0]!.n);
  }
  return { items: rows.map((r) => itemOf(r, now)), total };
}

/** The ids of the owner's keys not revoked (expired ones too: they could be revoked, and nothing else makes them so for good). */
export async function unrevokedKeyIds(db: Pool, ownerId: string): Promise<string[]> {
  const { rows } = await db.query<{ key_id: string }>({
    name: 'unrevoked-api-key-ids',
    text: 'SELECT key_id FROM api_keys WHERE owner_id = $1 AND revoked_at IS NULL ORDER BY created_at',
    values: [ownerId],
  });
  return rows.map((r) => r.key_id);
}

/** What a request's key resolves to: the key's scopes and its owner as they are now. */
export interface KeyCaller {
  keyId: string;
  ownerId: string;
  email: string;
  role: Role;
  tier: string;
  scopes: Scope[];
  sealedSecret: string;
  /** epoch ms, null: never (a remembered key is checked against it on every use) */
  expiresAt: number | null;
}

/** An active key (not revoked, not expired at `now`) by its hash, with its owner; null otherwise. */
export async function findActiveKey(db: Pool, keyHash: string, now: Date): Promise<KeyCaller | null> {
  const { rows } = await db.query<{
    key_id: string;
    owner_id: string;
    email: string;
    role: Role;
    tier: string;
    scopes: Scope[];
    sealed_secret: string;
    expires_at: Date | null;
  }>({
    name: 'find-active-api-key',
    text: `SELECT k.key_id, k.owner_id, u.email, u.role, u.tier, k.scopes, k.sealed_secret, k.expires_at
       FROM api_keys k JOIN users u ON u.id = k.owner_id::uuid
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $2)`,
    values: [keyHash, now],
  });
  const r = rows[0];
  if (!r) return null;
  const { key_id: keyId, owner_id: ownerId, email, role, tier, scopes, sealed_secret: sealedSecret, expires_at: expiresAt } = r;
  return { keyId, ownerId, email, role, tier, scopes, sealedSecret, expiresAt: expiresAt?.getTime() ?? null };
}
