import type { Migration } from '../../infra/db.ts';

export const usersMigrations: Migration[] = [
  {
    id: 'users/001-users-and-sessions',
    sql: `
      CREATE TABLE users (
        id uuid PRIMARY KEY,
        email text NOT NULL UNIQUE,
        username text NOT NULL,
        username_key text NOT NULL,
        role text NOT NULL,
        tier text NOT NULL,
        virtual_wallet_mode boolean NOT NULL,
        language_code text NOT NULL,
        avatar_filename text,
        receive_marketing_offers boolean,
        agreed_to_terms boolean,
        promo_code text,
        referral_code text,
        referrer_username text,
        referrer_user_id text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      );
      -- not unique: the reservation streams guarantee uniqueness, the read model only answers
      CREATE INDEX users_username_key ON users (username_key);
      CREATE TABLE user_sessions (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL,
        user_agent text NOT NULL,
        created_at timestamptz NOT NULL,
        last_used_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        ended_at timestamptz,
        end_reason text
      );
      CREATE INDEX user_sessions_user ON user_sessions (user_id, last_used_at DESC);`,
  },
  {
    // MFA on or off (the secret stays in the events, sealed), and the linked social accounts.
    // No earlier event sets either, so nothing is replayed.
    id: 'users/002-mfa-and-social-accounts',
    sql: `
      ALTER TABLE users ADD COLUMN mfa_enabled boolean NOT NULL DEFAULT false, ADD COLUMN mfa_enabled_at timestamptz;
      CREATE TABLE user_social_accounts (
        user_id uuid NOT NULL,
        provider text NOT NULL,
        subject text NOT NULL,
        email text NOT NULL,
        linked_at timestamptz NOT NULL,
        PRIMARY KEY (user_id, provider)
      );`,
  },
  {
    // The guide agent, interests and pinned agents of the user document. No earlier event sets them.
    id: 'users/003-guide-agent-interests-pins',
    sql: `
      ALTER TABLE users ADD COLUMN guide_agent_id text,
        ADD COLUMN interests text[] NOT NULL DEFAULT '{}',
        ADD COLUMN pinned_agent_ids text[] NOT NULL DEFAULT '{}';`,
  },
  {
    // How many MFA recovery codes the user has left (the digests stay in the events). No earlier
    // event issues codes: users who turned MFA on before have none until they ask for a set.
    id: 'users/004-mfa-recovery-codes',
    sql: `ALTER TABLE users ADD COLUMN mfa_recovery_codes_left integer NOT NULL DEFAULT 0;`,
  },
];
