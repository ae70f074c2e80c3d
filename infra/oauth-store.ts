// The OAuth authorization server's records (oidc-provider's adapter contract): clients registered
// dynamically, interactions, browser sessions, grants, authorization codes and access tokens, one
// table keyed by (model, id), the payload as JSON. In PostgreSQL, so they outlive restarts and every
// API process sees the same codes and tokens.
import type { Migration, Pool } from './db.ts';

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
];

/** What oidc-provider stores: its own fields, of which these few are looked up. */
export interface OAuthPayload {
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

export interface OAuthStore {
  /** the adapter class oidc-provider instantiates per model */
  Adapter: new (model: string) => OAuthAdapter;
  /** Deletes records past their expiry; how many. */
  purge(now: Date): Promise<number>;
}

/**
 * `consumeOnce` turns a second consumption into an error: oidc-provider reads a code, checks it is
 * unconsumed, then consumes it, so two concurrent exchanges of one code could both pass its check;
 * the conditional update here lets exactly one of them through, the other fails with the given error.
 */
export function createOAuthStore(pool: Pool, options: { alreadyConsumed: () => Error }): OAuthStore {
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

  class PostgresAdapter implements OAuthAdapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: OAuthPayload, expiresIn?: number) {
      await pool.query({
        name: 'oauth-upsert',
        text: `INSERT INTO oauth_records (model, id, payload, grant_id, uid, user_code, expires_at)
               VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $7::integer) END)
               ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
                 uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at`,
        values: [this.model, id, payload, payload.grantId ?? null, payload.uid ?? null, payload.userCode ?? null, expiresIn ?? null],
      });
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

/** Deletes OAuth records past their expiry (the recovery sweep calls it); how many. */
export async function purgeOAuthRecords(pool: Pool, now: Date): Promise<number> {
  const { rowCount } = await pool.query('DELETE FROM oauth_records WHERE expires_at <= $1', [now]);
  return rowCount ?? 0;
}
