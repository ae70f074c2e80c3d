// One row per API key: its owner, name, type, scopes, expiry and revocation, the keyed hash the
// auth plugin looks a request's key up by, and the sealed signing secret. Never the key or the
// secret in the clear.
import { apiKeyEventSchema, apiKeyEventTypes } from '../../domain/apikey/events.ts';
import type { Migration } from '../../infra/db.ts';
import type { Projector } from '../projector.ts';

const migrations: Migration[] = [
  {
    id: 'apikeys/001-api-keys',
    sql: `CREATE TABLE api_keys (
      key_id text PRIMARY KEY,
      owner_id text NOT NULL,
      name text NOT NULL,
      type text NOT NULL,
      scopes text[] NOT NULL,
      key_hash text NOT NULL UNIQUE,
      sealed_secret text NOT NULL,
      prefix text NOT NULL,
      expires_at timestamptz,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    );
    CREATE INDEX api_keys_owner ON api_keys (owner_id, created_at DESC);`,
  },
];

export const apiKeysProjector: Projector = {
  name: 'api-keys',
  migrations,
  tables: ['api_keys'],
  async apply(client, recorded) {
    if (!recorded.streamName.startsWith('apikey-') || !apiKeyEventTypes.has(recorded.type)) return;
    const event = apiKeyEventSchema.parse({ type: recorded.type, data: recorded.data });
    if (event.type === 'ApiKeyCreated') {
      const d = event.data;
      await client.query(
        `INSERT INTO api_keys (key_id, owner_id, name, type, scopes, key_hash, sealed_secret, prefix, expires_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [d.keyId, d.ownerId, d.name, d.type, d.scopes, d.keyHash, d.sealedSecret, d.prefix, d.expiresAt, d.createdAt],
      );
      return;
    }
    await client.query('UPDATE api_keys SET revoked_at = $2 WHERE key_id = $1', [event.data.keyId, event.data.revokedAt]);
  },
};
