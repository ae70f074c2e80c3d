// Idempotency-Key records (the IETF httpapi Idempotency-Key draft): per user and key (stored as a
// SHA-256 hash), the fingerprint of the first request, and once it answered, the status and the
// envelope it answered. In PostgreSQL, so every API process shares them and they outlive restarts.
// A first request still running holds a lease: a repeat meanwhile is told so; once the lease
// lapsed (the process died) a repeat takes the key over and runs the request again, which finds
// what the first run did (the command's transfer id comes from the key).
import type { Migration, Pool } from './db.ts';

export const idempotencyMigrations: Migration[] = [
  {
    id: 'idempotency/001-keys',
    sql: `CREATE TABLE idempotency_keys (
      user_id text NOT NULL,
      key_hash text NOT NULL,
      request_hash text NOT NULL,
      status text NOT NULL,
      response_status integer,
      response_body text,
      lease_until timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, key_hash)
    );
    CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);`,
  },
];

/** What a request with a key does: run it, answer the first response, or be refused. */
export type Claim = { kind: 'run' } | { kind: 'replay'; status: number; body: string } | { kind: 'in-flight' } | { kind: 'mismatch' };

export interface IdempotencyKeys {
  /** Claims the key for a request with this fingerprint at `now`. */
  claim(userId: string, keyHash: string, requestHash: string, now: Date): Promise<Claim>;
  /** Keeps the answer of a claimed key. */
  complete(userId: string, keyHash: string, status: number, body: string): Promise<void>;
  /** Frees a claimed key that answered nothing worth keeping (a refusal before anything ran). */
  release(userId: string, keyHash: string): Promise<void>;
  /** Deletes keys past their retention; how many. */
  purge(now: Date): Promise<number>;
}

export function createIdempotencyKeys(pool: Pool, options: { ttlMs: number; leaseMs: number }): IdempotencyKeys {
  return {
    async claim(userId, keyHash, requestHash, now) {
      // A replay of an answered key is a read: the claim below would lock and rewrite nothing, yet
      // cost a transaction id and a durable commit on every replay.
      const answered = await pool.query<{ request_hash: string; response_status: number; response_body: string }>({
        name: 'idempotency-answered',
        text: `SELECT request_hash, response_status, response_body FROM idempotency_keys
                WHERE user_id = $1 AND key_hash = $2 AND status = 'done' AND expires_at > $3`,
        values: [userId, keyHash, now],
      });
      const done = answered.rows[0];
      if (done) return done.request_hash === requestHash ? { kind: 'replay', status: done.response_status, body: done.response_body } : { kind: 'mismatch' };
      const leaseUntil = new Date(now.getTime() + options.leaseMs);
      const expiresAt = new Date(now.getTime() + options.ttlMs);
      // New, expired (a new key), or abandoned by a process that died mid-request (same request): ours.
      const claimed = await pool.query({
        name: 'idempotency-claim',
        text: `INSERT INTO idempotency_keys (user_id, key_hash, request_hash, status, lease_until, expires_at, created_at)
               VALUES ($1, $2, $3, 'running', $4, $5, $6)
               ON CONFLICT (user_id, key_hash) DO UPDATE SET request_hash = excluded.request_hash, status = 'running',
                 response_status = NULL, response_body = NULL, lease_until = excluded.lease_until,
                 expires_at = CASE WHEN idempotency_keys.expires_at <= excluded.created_at THEN excluded.expires_at ELSE idempotency_keys.expires_at END,
                 created_at = CASE WHEN idempotency_keys.expires_at <= excluded.created_at THEN excluded.created_at ELSE idempotency_keys.created_at END
               WHERE idempotency_keys.expires_at <= excluded.created_at
                  OR (idempotency_keys.status = 'running' AND idempotency_keys.lease_until <= excluded.created_at
                      AND idempotency_keys.request_hash = excluded.request_hash)
               RETURNING 1`,
        values: [userId, keyHash, requestHash, leaseUntil, expiresAt, now],
      });
      if (claimed.rowCount) return { kind: 'run' };
      const { rows } = await pool.query<{ request_hash: string; status: string; response_status: number | null; response_body: string | null }>({
        name: 'idempotency-read',
        text: 'SELECT request_hash, status, response_status, response_body FROM idempotency_keys WHERE user_id = $1 AND key_hash = $2',
        values: [userId, keyHash],
      });
      const row = rows[0];
      if (!row) return this.claim(userId, keyHash, requestHash, now); // released meanwhile
      if (row.request_hash !== requestHash) return { kind: 'mismatch' };
      if (row.status !== 'done') return { kind: 'in-flight' };
      return { kind: 'replay', status: row.response_status!, body: row.response_body! };
    },
    async complete(userId, keyHash, status, body) {
      await pool.query({
        name: 'idempotency-complete',
        text: `UPDATE idempotency_keys SET status = 'done', response_status = $3, response_body = $4 WHERE user_id = $1 AND key_hash = $2`,
        values: [userId, keyHash, status, body],
      });
    },
    async release(userId, keyHash) {
      await pool.query({
        name: 'idempotency-release',
        text: `DELETE FROM idempotency_keys WHERE user_id = $1 AND key_hash = $2 AND status = 'running'`,
        values: [userId, keyHash],
      });
    },
    async purge(now) {
      const { rowCount } = await pool.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [now]);
      return rowCount ?? 0;
    },
  };
}
