// The OAuth authorization server's records (oidc-provider's adapter contract): clients registered
// dynamically, interactions, browser sessions, grants, authorization codes and access tokens, one
// table keyed by (model, id), the payload as JSON. In PostgreSQL, so they outlive restarts and every
// API process sees the same codes and tokens.
//
// Registration is open, so registered clients expire too (docs/decisions.md, OAuth): one that never
// obtained a grant `unusedClientTtlHours` after registering, one that did IDLE_CLIENT_DAYS after its
// latest grant expires. The purge then deletes the client with every record naming it.
import { fieldOf, findUnstorableText } from '../domain/shared/storable-text.ts';
import type { Migration, Pool } from './db.ts';

/** How long a registered client is kept after its latest grant expired (a grant lasts 14 days). */
export const IDLE_CLIENT_DAYS = 90;

export const oauthMigrations: Migration[] = [
  {
    id: 'oauth/001-records',
    sql: `CREATE TABLE oauth_records (
      model text NOT NULL,
      id text NOT NULL,
      payload jsonb NOT NULL,
      grant_id text,
      uid text,
      user_code text,
      expires_at timestamptz,
      consumed_at timestamptz,
      PRIMARY KEY (model, id)
    );
    CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL;
    CREATE INDEX oauth_records_uid ON oauth_records (model, uid) WHERE uid IS NOT NULL;
    CREATE INDEX oauth_records_user_code ON oauth_records (model, user_code) WHERE user_code IS NOT NULL;
    CREATE INDEX oauth_records_expiry ON oauth_records (expires_at) WHERE expires_at IS NOT NULL;`,
  },
  {
    // Clients registered before their retention were kept for good: one with a grant now lapses 90 days
    // after its latest grant expires, the others a day (the default TTL) after this migration.
    id: 'oauth/002-client-retention',
    sql: `CREATE INDEX oauth_records_client ON oauth_records ((payload->>'clientId'));
    UPDATE oauth_records c SET expires_at = coalesce(
        (SELECT max(g.expires_at) FROM oauth_records g WHERE g.model = 'Grant' AND g.payload->>'clientId' = c.id) + interval '90 days',
        now() + interval '24 hours')
      WHERE c.model = 'Client' AND c.expires_at IS NULL;`,
  },
];

/** What oidc-provider stores: its own fields, of which these few are looked up. */
export interface OAuthPayload {
  /** the client a grant, code or token was issued to (a client's own record has `client_id`) */
  clientId?: string;
  grantId?: string;
  uid?: string;
  userCode?: string;
  consumed?: number;
  [key: string]: unknown;
}

/** oidc-provider's adapter interface, one instance per model (Client, Grant, AuthorizationCode…). */
export interface OAuthAdapter {
  upsert(id: string, payload: OAuthPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<OAuthPayload | undefined>;
  findByUid(uid: string): Promise<OAuthPayload | undefined>;
  findByUserCode(userCode: string): Promise<OAuthPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

export interface OAuthStoreOptions {
  /** the error a second consumption of a code fails with */
  alreadyConsumed: () => Error;
  /** how long a registered client that never obtained a grant is kept */
  unusedClientTtlHours: number;
  /** the error a record holding text PostgreSQL cannot store fails with (a client's metadata, the one record a caller writes) */
  unstorable: (message: string) => Error;
}

export interface OAuthStore {
  /** the adapter class oidc-provider instantiates per model */
  Adapter: new (
    model: string,
  ) => OAuthAdapter;
  /** Deletes records past their expiry; how many. */
  purge(now: Date): Promise<number>;
}

const UPSERT = `INSERT INTO oauth_records (model, id, payload, grant_id, uid, user_code, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $7::integer) END)
  ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
    uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at`;

const upsertValues = (model: string, id: string, payload: OAuthPayload, expiresIn: number | undefined) => [
  model,
  id,
  payload,
  payload.grantId ?? null,
  payload.uid ?? null,
  payload.userCode ?? null,
  expiresIn ?? null,
];

/**
 * `consume` turns a second consumption into an error: oidc-provider reads a code, checks it is
 * unconsumed, then consumes it, so two concurrent exchanges of one code could both pass its check;
 * the conditional update here lets exactly one of them through, the other fails with the given error.
 */
export function createOAuthStore(pool: Pool, options: OAuthStoreOptions): OAuthStore {
  const live = (row: { payload: OAuthPayload; consumed_at: Date | null } | undefined): OAuthPayload | undefined => {
    if (!row) return undefined;
    return row.consumed_at ? { ...row.payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : row.payload;
  };
  const findBy = async (model: string, column: 'id' | 'uid' | 'user_code', value: string) => {
    const { rows } = await pool.query<{ payload: OAuthPayload; consumed_at: Date | null }>({
      name: `oauth-find-${column}`,
      text: `SELECT payload, consumed_at FROM oauth_records
              WHERE model = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > now())`,
      values: [model, value],
    });
    return live(rows[0]);
  };

  /**
   * A grant keeps its client: in the same statement the client's expiry moves to IDLE_CLIENT_DAYS after
   * the grant's (a grant without expiry keeps it for good); never earlier, and a client already past its
   * expiry stays gone (the provider no longer finds it, the purge will delete it).
   */
  const saveGrant = async (id: string, payload: OAuthPayload, expiresIn?: number) => {
    await pool.query({
      name: 'oauth-upsert-grant',
      text: `WITH saved AS (${UPSERT} RETURNING expires_at)
             UPDATE oauth_records
                SET expires_at = greatest(expires_at, coalesce((SELECT expires_at FROM saved), 'infinity') + make_interval(days => $8::integer))
              WHERE model = 'Client' AND id = $9 AND expires_at > now()`,
      values: [...upsertValues('Grant', id, payload, expiresIn), IDLE_CLIENT_DAYS, payload.clientId ?? null],
    });
  };

  class PostgresAdapter implements OAuthAdapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: OAuthPayload, expiresIn?: number) {
      const unstorable = findUnstorableText(payload);
      if (unstorable) throw options.unstorable(`${fieldOf(unstorable.path)}: ${unstorable.problem}`);
      if (this.model === 'Grant') return saveGrant(id, payload, expiresIn);
      // The provider stores a registered client without an expiry: it gets the unused client's.
      const ttl = this.model === 'Client' ? (expiresIn ?? options.unusedClientTtlHours * 3600) : expiresIn;
      await pool.query({ name: 'oauth-upsert', text: UPSERT, values: upsertValues(this.model, id, payload, ttl) });
    }

    find(id: string) {
      return findBy(this.model, 'id', id);
    }

    findByUid(uid: string) {
      return findBy(this.model, 'uid', uid);
    }

    findByUserCode(userCode: string) {
      return findBy(this.model, 'user_code', userCode);
    }

    async consume(id: string) {
      const { rowCount } = await pool.query({
        name: 'oauth-consume',
        text: 'UPDATE oauth_records SET consumed_at = now() WHERE model = $1 AND id = $2 AND consumed_at IS NULL',
        values: [this.model, id],
      });
      if (!rowCount) throw options.alreadyConsumed();
    }

    async destroy(id: string) {
      await pool.query({ name: 'oauth-destroy', text: 'DELETE FROM oauth_records WHERE model = $1 AND id = $2', values: [this.model, id] });
    }

    async revokeByGrantId(grantId: string) {
      await pool.query({ name: 'oauth-revoke-grant', text: 'DELETE FROM oauth_records WHERE grant_id = $1', values: [grantId] });
    }
  }

  return { Adapter: PostgresAdapter, purge: (now) => purgeOAuthRecords(pool, now) };
}

/**
 * Deletes OAuth records past their expiry (the housekeeping worker's purge calls it); how many. A client past its
 * expiry first takes along every record naming it (grants, codes, tokens, whatever their own expiry):
 * a token must not outlive its client, e.g. one retired by hand. Idempotent: what a sweep stopped
 * between the two statements left, the next deletes.
 */
export async function purgeOAuthRecords(pool: Pool, now: Date): Promise<number> {
  const issued = await pool.query({
    name: 'oauth-purge-issued',
    text: `DELETE FROM oauth_records
            WHERE payload->>'clientId' IN (SELECT id FROM oauth_records WHERE model = 'Client' AND expires_at <= $1)`,
    values: [now],
  });
  const expired = await pool.query({ name: 'oauth-purge-expired', text: 'DELETE FROM oauth_records WHERE expires_at <= $1', values: [now] });
  return (issued.rowCount ?? 0) + (expired.rowCount ?? 0);
}

/**
 * Ends everything OAuth holds for a user: grants, the tokens and codes issued under them, and the
 * authorization server's browser sessions (the consent page's sign-in). How many grants ended.
 */
export async function revokeAccountOAuth(pool: Pool, accountId: string): Promise<number> {
  const { rows } = await pool.query<{ model: string }>(
    `DELETE FROM oauth_records
      WHERE payload->>'accountId' = $1 OR grant_id IN (SELECT id FROM oauth_records WHERE model = 'Grant' AND payload->>'accountId' = $1)
      RETURNING model`,
    [accountId],
  );
  return rows.filter((r) => r.model === 'Grant').length;
}
