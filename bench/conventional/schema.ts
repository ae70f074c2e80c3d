// The conventional baseline's tables. Users, sessions and the per-pool rows use the very DDL of
// our read models, so the identity lookup and GET subscriptions read rows of the same shape and
// width on both sides; agents, wallets, beta seats and the audit are the conventional design's own.
// Manual trades: the lots are our read model's table (one row per open lot, updated in place by the
// trade itself), the venue's swaps and mark prices the very tables of our simulated venue.
import type { Migration } from '../../infra/db.ts';
import { simulatedSwapMigrations } from '../../infra/venues/swaps.ts';
import { marketPricesProjector } from '../../projections/market/projector.ts';
import { subscriptionsTable } from '../../projections/subscriptions/projector.ts';
import { usersMigrations } from '../../projections/users/schema.ts';
import { lotMigrations } from '../../projections/wallets/lots.ts';

export const conventionalMigrations: Migration[] = [
  ...usersMigrations,
  // `subscriptions` is the pool table here: one row per (user, agent, wallet context), written by
  // the follow transaction itself instead of a projector.
  subscriptionsTable,
  {
    id: 'conventional/001-agents-wallets-audit',
    sql: `
      CREATE TABLE agents (
        id text PRIMARY KEY,
        developer_id text NOT NULL,
        name text NOT NULL,
        avatar_url text,
        venue text NOT NULL,
        max_leverage integer,
        success_fee_percent double precision NOT NULL,
        min_allocation_micro bigint NOT NULL,
        min_trade_micro bigint NOT NULL,
        min_per_trade_percent double precision NOT NULL,
        recommended_per_trade_percent double precision NOT NULL,
        max_concurrent_positions integer NOT NULL,
        max_entries_per_trade integer NOT NULL,
        beta_status text NOT NULL,
        max_beta_users integer
      );
      CREATE TABLE beta_seats (
        agent_id text NOT NULL REFERENCES agents (id),
        user_id uuid NOT NULL,
        taken_at timestamptz NOT NULL,
        PRIMARY KEY (agent_id, user_id)
      );
      CREATE TABLE wallets (
        user_id uuid NOT NULL,
        wallet_context text NOT NULL,
        balance_micro bigint NOT NULL CHECK (balance_micro >= 0),
        opened_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (user_id, wallet_context)
      );
      CREATE TABLE follow_audit (
        id bigserial PRIMARY KEY,
        request_id text NOT NULL,
        user_id uuid NOT NULL,
        agent_id text NOT NULL,
        wallet_context text NOT NULL,
        amount_micro bigint NOT NULL,
        balance_after_micro bigint NOT NULL,
        settings jsonb NOT NULL,
        created_at timestamptz NOT NULL
      );`,
  },
  {
    id: 'conventional/002-withdraw-audit',
    sql: `
      CREATE TABLE withdraw_audit (
        id bigserial PRIMARY KEY,
        request_id text NOT NULL,
        user_id uuid NOT NULL,
        agent_id text NOT NULL,
        wallet_context text NOT NULL,
        amount_micro bigint NOT NULL,
        pending boolean NOT NULL,
        wallet_balance_after_micro bigint,
        created_at timestamptz NOT NULL
      );`,
  },
  // Manual buys and sells (bench/conventional/trade.ts): lots and prices as ours keeps them, the
  // simulated venue's own swaps table, and a record of each trade written by its transaction.
  ...lotMigrations,
  {
    // Our read models' migrations reset their projector's checkpoint when they replay; this database
    // has no projector, so an empty checkpoint table lets those migrations run unchanged.
    id: 'conventional/002-checkpoints-stand-in',
    sql: 'CREATE TABLE IF NOT EXISTS projection_checkpoints (name text PRIMARY KEY)',
  },
  ...marketPricesProjector.migrations,
  ...simulatedSwapMigrations,
  {
    id: 'conventional/003-manual-trades',
    sql: `
      CREATE TABLE manual_trades (
        transfer_id text PRIMARY KEY,
        user_id uuid NOT NULL,
        wallet_context text NOT NULL,
        side text NOT NULL,
        mint text NOT NULL,
        units bigint NOT NULL,
        usd_micro bigint NOT NULL,
        price_micro bigint NOT NULL,
        tx_id text NOT NULL,
        realized_pnl_micro bigint,
        balance_after_micro bigint NOT NULL,
        created_at timestamptz NOT NULL
      );`,
  },
];
