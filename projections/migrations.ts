// The whole schema, created at start. It lives with the read models (projections may import infra;
// infra imports nothing of ours).
import type { Config } from '../infra/config.ts';
import { migrate, type Migration, type Pool } from '../infra/db.ts';
import { eventStoreMigrations } from '../infra/eventstore/postgres-schema.ts';
import { checkpointMigrations } from './checkpoints.ts';
import { idempotencyMigrations } from '../infra/idempotency.ts';
import { oauthMigrations } from '../infra/oauth-store.ts';
import { simulatedBookMigrations } from '../infra/venues/stored-books.ts';
import { simulatedSwapMigrations } from '../infra/venues/swaps.ts';
import type { Projector } from './projector.ts';
import { poolFoldMigrations } from './statements/fold-snapshots.ts';

/** Every migration of the schema: the event store (PostgreSQL mode), checkpoints, the infra tables, read models. */
export function schemaMigrations(config: Pick<Config, 'EVENT_STORE'>, projectors: Projector[]): Migration[] {
  return [
    ...(config.EVENT_STORE === 'postgres' ? eventStoreMigrations : []),
    ...checkpointMigrations,
    ...simulatedSwapMigrations,
    ...simulatedBookMigrations,
    ...idempotencyMigrations,
    ...oauthMigrations,
    ...poolFoldMigrations,
    ...projectors.flatMap((p) => p.migrations),
  ];
}

/** The whole schema, created at start. */
export async function migrateAll(pool: Pool, config: Pick<Config, 'EVENT_STORE'>, projectors: Projector[]): Promise<void> {
  await migrate(pool, schemaMigrations(config, projectors));
}
