import { z } from 'zod';
import { roleSchema, socialProviders, socialProviderSchema } from '../../domain/user/events.ts';
import { usernameKey } from '../../domain/user/fields.ts';
import type { Pool } from '../../infra/db.ts';
import type { Position } from '../../infra/eventstore/port.ts';
import { checkpointOf } from '../checkpoints.ts';

/** The user document of GET/PATCH /api/v1/users/me (and the admin user details). */
export const userDocument = z.object({
  id: z.string(),
  email: z.string(),
  username: z.string(),
  role: roleSchema,
  tier: z.string(),
  virtualWalletMode: z.boolean(),
  languageCode: z.string(),
  avatarFilename: z.string().nullable(),
  receiveMarketingOffers: z.boolean().nullable(),
  agreedToTerms: z.boolean().nullable(),
  /** whether sign-ins need a TOTP code (or a recovery code) */
  mfaEnabled: z.boolean(),
  /** unused MFA recovery codes of the current set (0 while MFA is off) */
  mfaRecoveryCodesLeft: z.number().int(),
  /** the agent picked as guide (GET /api/v1/users/me/guide-agent answers its record) */
  guideAgentId: z.string().nullable(),
  interests: z.array(z.string()),
  /** in the order they were pinned */
  pinnedAgentIds: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type UserDocument = z.infer<typeof userDocument>;

export const sessionDocument = z.object({
  id: z.string(),
  userAgent: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string(),
  expiresAt: z.string(),
  current: z.boolean(),
});
export type SessionDocument = z.infer<typeof sessionDocument>;

interface UserRow {
  id: string;
  email: string;
  username: string;
  role: z.infer<typeof roleSchema>;
  tier: string;
  virtual_wallet_mode: boolean;
  language_code: string;
  avatar_filename: string | null;
  receive_marketing_offers: boolean | null;
  agreed_to_terms: boolean | null;
  mfa_enabled: boolean;
  mfa_recovery_codes_left: number;
  guide_agent_id: string | null;
  interests: string[];
  pinned_agent_ids: string[];
  created_at: Date;
  updated_at: Date;
}

const toDocument = (r: UserRow): UserDocument => ({
  id: r.id,
  email: r.email,
  username: r.username,
  role: r.role,
  tier: r.tier,
  virtualWalletMode: r.virtual_wallet_mode,
  languageCode: r.language_code,
  avatarFilename: r.avatar_filename,
  receiveMarketingOffers: r.receive_marketing_offers,
  agreedToTerms: r.agreed_to_terms,
  mfaEnabled: r.mfa_enabled,
  mfaRecoveryCodesLeft: r.mfa_recovery_codes_left,
  guideAgentId: r.guide_agent_id,
  interests: r.interests,
  pinnedAgentIds: r.pinned_agent_ids,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** UserRow's columns, named: a prepared statement's result must keep its shape when a migration adds a column. */
const USER_COLUMNS =
  'id, email, username, role, tier, virtual_wallet_mode, language_code, avatar_filename, receive_marketing_offers, agreed_to_terms, mfa_enabled, mfa_recovery_codes_left, guide_agent_id, interests, pinned_agent_ids, created_at, updated_at';

/** A prepared statement (named): GET /api/v1/users/me, the cheapest signed-in read, runs it on every call. */
export async function getUser(pool: Pool, userId: string): Promise<UserDocument | null> {
  const { rows } = await pool.query<UserRow>({ name: 'get-user', text: `SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, values: [userId] });
  return rows[0] ? toDocument(rows[0]) : null;
}

/** the same, qualified (projection_checkpoints has an updated_at too) */
const USER_COLUMNS_OF_U = USER_COLUMNS.split(', ')
  .map((c) => `u.${c}`)
  .join(', ');

/**
 * The user document with the position the users read model had applied when it was read (its checkpoint, read in the same statement,
 * so the same snapshot): what a remembered document is compared with the caller's latest write by (api/routes/users/index.ts).
 */
export async function getUserAt(pool: Pool, userId: string): Promise<{ document: UserDocument; at: Position } | null> {
  const { rows } = await pool.query<UserRow & { commit_position: string | null; prepare_position: string | null }>({
    name: 'get-user-at',
    text: `SELECT ${USER_COLUMNS_OF_U}, c.commit_position, c.prepare_position FROM users u
       LEFT JOIN projection_checkpoints c ON c.name = 'users' WHERE u.id = $1`,
    values: [userId],
  });
  const row = rows[0];
  if (!row) return null;
  return { document: toDocument(row), at: checkpointOf(row) };
}

export async function usernameExists(pool: Pool, username: string): Promise<boolean> {
  const { rowCount } = await pool.query('SELECT 1 FROM users WHERE username_key = $1 LIMIT 1', [usernameKey(username)]);
  return (rowCount ?? 0) > 0;
}

/** A live JWT session's caller, as findIdentity reads it. */
export interface SessionIdentity {
  userId: string;
  email: string;
  role: UserDocument['role'];
  tier: string;
  sessionId: string;
}

/**
 * The caller behind an access token: its user and a session that has not ended. Null when the
 * user is unknown or the session was signed out (or ended for a reused refresh token).
 */
export async function findIdentity(pool: Pool, userId: string, sessionId: string): Promise<SessionIdentity | null> {
  const { rows } = await pool.query<{ id: string; email: string; role: UserDocument['role']; tier: string }>({
    name: 'find-identity',
    text: `SELECT u.id, u.email, u.role, u.tier FROM users u
       JOIN user_sessions s ON s.user_id = u.id AND s.id = $2 AND s.ended_at IS NULL
      WHERE u.id = $1`,
    values: [userId, sessionId],
  });
  const row = rows[0];
  return row ? { userId: row.id, email: row.email, role: row.role, tier: row.tier, sessionId } : null;
}

/** The user's sessions that are neither ended nor expired, most recently used first. */
export async function listActiveSessions(pool: Pool, userId: string, now: Date, currentSessionId?: string): Promise<SessionDocument[]> {
  const { rows } = await pool.query<{ id: string; user_agent: string; created_at: Date; last_used_at: Date; expires_at: Date }>(
    `SELECT id, user_agent, created_at, last_used_at, expires_at FROM user_sessions
      WHERE user_id = $1 AND ended_at IS NULL AND expires_at > $2
      ORDER BY last_used_at DESC, created_at DESC`,
    [userId, now],
  );
  return rows.map((r) => ({
    id: r.id,
    userAgent: r.user_agent,
    createdAt: r.created_at.toISOString(),
    lastUsedAt: r.last_used_at.toISOString(),
    expiresAt: r.expires_at.toISOString(),
    current: r.id === currentSessionId,
  }));
}

/**
 * When MFA was turned on (null while off) and the user's latest sign-in: the start of their newest
 * session, ended since or not (a refresh is not a sign-in). Null for an unknown user.
 */
export async function getSignInFacts(pool: Pool, userId: string): Promise<{ mfaEnabledAt: string | null; lastSignInAt: string | null } | null> {
  const { rows } = await pool.query<{ mfa_enabled_at: Date | null; last_sign_in_at: Date | null }>(
    `SELECT u.mfa_enabled_at, (SELECT max(s.created_at) FROM user_sessions s WHERE s.user_id = u.id) AS last_sign_in_at
       FROM users u WHERE u.id = $1`,
    [userId],
  );
  const row = rows[0];
  return row ? { mfaEnabledAt: row.mfa_enabled_at?.toISOString() ?? null, lastSignInAt: row.last_sign_in_at?.toISOString() ?? null } : null;
}

/** GET /api/v1/users/me/social-status: every supported provider, linked or not. */
export const socialStatus = z.object({
  providers: z.array(z.object({ type: socialProviderSchema, linked: z.boolean(), email: z.string().optional(), linkedAt: z.string().optional() })),
});
export type SocialStatus = z.infer<typeof socialStatus>;

export async function getSocialStatus(pool: Pool, userId: string): Promise<SocialStatus> {
  const { rows } = await pool.query<{ provider: string; email: string; linked_at: Date }>(
    'SELECT provider, email, linked_at FROM user_social_accounts WHERE user_id = $1',
    [userId],
  );
  return {
    providers: socialProviders.map((type) => {
      const row = rows.find((r) => r.provider === type);
      return row ? { type, linked: true, email: row.email, linkedAt: row.linked_at.toISOString() } : { type, linked: false };
    }),
  };
}
